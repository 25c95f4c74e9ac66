import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// GET /customers?query=: every word starts a first or last name or an e-mail address, or is the
// remote_id; case-insensitive; LIKE's own characters are only themselves; the shop's own customers.

describe(`searching customers by name, e-mail or remote_id (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    const people: [number, string | null, string | null, string | null][] = [
      [1, 'margaret.lovelace@example.com', 'Margaret', 'Lovelace'],
      [2, 'maggie@example.org', 'Margarethe', 'Hamilton'],
      [3, 'grace@example.com', 'Grace', 'Hopper'],
      [4, 'percent%_sign@example.com', 'Per', 'Cent'],
      [25, null, 'Zoë', 'Ørsted'],
      [250, 'ada@example.com', null, null],
    ];
    for (const [id, email, first, last] of people) {
      expect((await t.request('PUT', `${API}/customers/${id}`, { body: { email, first_name: first, last_name: last } })).statusCode).toBeLessThan(300);
    }
    const other = await t.createShop();
    await t.request('PUT', `${API}/customers/9`, { token: other.token, body: { email: 'margaret@other.example', first_name: 'Margaret' } });
  });
  afterAll(() => t.close());

  const found = async (query: string, extra: Record<string, string> = {}) => {
    const res = await t.request('GET', `${API}/customers`, { query: { query, ...extra } });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().data as { remote_id: number }[]).map((c) => c.remote_id);
  };

  it('finds by the start of a name or an e-mail, every word, whatever the case', async () => {
    expect(await found('margaret')).toEqual([1, 2]);
    expect(await found('MARGARET')).toEqual([1, 2]);
    expect(await found('Margaret Lovelace')).toEqual([1]);
    expect(await found('  lovelace   margaret ')).toEqual([1]);
    expect(await found('margaret.lov')).toEqual([1]);
    expect(await found('magg')).toEqual([2]);
    expect(await found('hamilton marg')).toEqual([2]);
    // Beyond ASCII, letters match as stored (SQLite's lower() folds ASCII only).
    expect(await found('zoë Ørs')).toEqual([25]);
    expect(await found('argaret')).toEqual([]);
    expect(await found('margaret hopper')).toEqual([]);
  });

  it('takes a number as a remote_id too, and LIKE wildcards as themselves', async () => {
    expect(await found('25')).toEqual([25]);
    expect(await found('250')).toEqual([250]);
    expect(await found('%')).toEqual([]);
    expect(await found('_')).toEqual([]);
    expect(await found('percent%_')).toEqual([4]);
    expect(await found('per')).toEqual([4]);
  });

  it('pages and sorts what it finds, and counts it for the last page', async () => {
    const res = await t.request('GET', `${API}/customers`, {
      query: { query: 'margaret', 'pagination[per_page]': '1', 'sort[order_type]': 'id', 'sort[order_direction]': 'desc' },
    });
    expect(res.json().data.map((c: { remote_id: number }) => c.remote_id)).toEqual([2]);
    expect(res.json().links.last).toContain('pagination[page]=2');
  });

  it('refuses an over-long query', async () => {
    for (const query of ['x'.repeat(201)]) {
      const res = await t.request('GET', `${API}/customers`, { query: { query } });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'invalid_parameter', details: [{ param: 'query' }] });
    }
  });
});
