import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, postBatch, expectConsistentLedger } from './fixtures.js';

describe(`reading the ledger (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let ids: number[];
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 3);
    // Seven events: applied on days 1..7 of January, customers 1, 2, 3, 1, 2, 3, 1.
    const res = await postBatch(
      t,
      Array.from({ length: 7 }, (_, i) => ({
        customer_identifier: String((i % 3) + 1),
        source: i % 2 === 0 ? 'order' : 'manual',
        points_amount: 10 + i,
        applied_at: `2026-01-0${i + 1}T00:00:00Z`,
      })),
    );
    ids = res.json().data.map((e: { id: number }) => e.id);
  });
  afterAll(() => t.close());

  const list = (path: string, query: Record<string, string> = {}) => t.request('GET', `${API}/${path}`, { query });

  it('retrieves one event, and 404s for unknown ids and other shops', async () => {
    const res = await list(`points_events/${ids[0]}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      id: ids[0],
      source: 'order',
      points_amount: 10,
      customer: { remote_id: 1, email: 'customer1@example.com', points_balance: 10 },
    });
    expect((await list('points_events/999999')).statusCode).toBe(404);
    for (const id of ['abc', '0', '-1']) expect(errorOf(await list(`points_events/${id}`)).code).toBe('invalid_parameter');
    const other = await t.createShop();
    const theirs = await t.request('GET', `${API}/points_events/${ids[0]}`, { token: other.token });
    expect(theirs.statusCode).toBe(404);
    expect(errorOf(theirs).code).toBe('not_found');
  });

  it('lists in offset mode by default, with absolute links', async () => {
    const res = await list('points_events', { 'pagination[per_page]': '3' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data.map((e: { id: number }) => e.id)).toEqual(ids.slice(0, 3));
    expect(body.links.self).toMatch(/^http:\/\/.+\/merchant_api\/v1\/points_events\?pagination\[page\]=1&pagination\[per_page\]=3$/);
    expect(body.links.next).toMatch(/pagination\[page\]=2&pagination\[per_page\]=3$/);
    expect(body.links.last).toMatch(/pagination\[page\]=3&pagination\[per_page\]=3$/);
    const last = (await list('points_events', { 'pagination[per_page]': '3', 'pagination[page]': '3' })).json();
    expect(last.data.map((e: { id: number }) => e.id)).toEqual(ids.slice(6));
    expect(last.links.next).toBeNull();
  });

  it('walks the whole ledger in cursor mode', async () => {
    const seen: number[] = [];
    let sinceId = 0;
    for (let guard = 0; guard < 10; guard++) {
      const body = (await list('points_events', { 'pagination[since_id]': String(sinceId), 'pagination[limit]': '2' })).json();
      expect(body.links).toMatchObject({ since_id: sinceId, limit: 2 });
      seen.push(...body.data.map((e: { id: number }) => e.id));
      if (body.links.next_since_id === null) break;
      sinceId = body.links.next_since_id;
    }
    expect(seen).toEqual(ids);
  });

  it('sorts by applied_at in offset mode', async () => {
    const body = (await list('points_events', { 'sort[order_type]': 'applied_at', 'sort[order_direction]': 'desc' })).json();
    expect(body.data.map((e: { id: number }) => e.id)).toEqual([...ids].reverse());
  });

  it('filters by source and by an applied_at range', async () => {
    const orders = (await list('points_events', { source: 'order' })).json().data;
    expect(orders.map((e: { id: number }) => e.id)).toEqual([ids[0], ids[2], ids[4], ids[6]]);
    const range = (await list('points_events', { 'applied_at[gte]': '2026-01-02T00:00:00Z', 'applied_at[lt]': '2026-01-04T00:00:00Z' })).json().data;
    expect(range.map((e: { id: number }) => e.id)).toEqual([ids[1], ids[2]]);
    const after = (await list('points_events', { 'applied_at[gt]': '2026-01-06T00:00:00Z' })).json().data;
    expect(after.map((e: { id: number }) => e.id)).toEqual([ids[6]]);
  });

  it('answers a bad filter or pagination parameter with 400 invalid_parameter naming it', async () => {
    for (const [param, value] of [
      ['source', 'gift'],
      ['applied_at[gte]', 'yesterday'],
      ['pagination[limit]', '251'],
    ] as const) {
      const res = await list('points_events', { [param]: value });
      expect(res.statusCode).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'invalid_parameter', details: [expect.objectContaining({ param })] });
    }
  });

  it("lists one customer's events, by remote_id or e-mail", async () => {
    for (const identifier of ['1', 'CUSTOMER1@example.com']) {
      const res = await list(`customers/${encodeURIComponent(identifier)}/points_events`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.map((e: { id: number }) => e.id)).toEqual([ids[0], ids[3], ids[6]]);
    }
    const filtered = (await list('customers/1/points_events', { source: 'manual' })).json().data;
    expect(filtered.map((e: { id: number }) => e.id)).toEqual([ids[3]]);
    const missing = await list('customers/42/points_events');
    expect(missing.statusCode).toBe(404);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
