import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, loyalty, postBatch } from '../ledger/fixtures.js';

// GET /exports/{list}.csv and `loyalty export`: the whole filtered list, RFC 4180, formulas
// escaped (docs/reports.md).

describe(`exports (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 3);
    const res = await t.request('PUT', `${API}/customers/4`, {
      body: { email: 'eve@example.com', first_name: '=HYPERLINK("http://evil.example")', last_name: '@SUM(A1)' },
    });
    expect(res.statusCode, res.body).toBe(201);
    const events = [
      { customer_identifier: '4', source: 'manual', points_amount: 10, internal_note: 'A "quoted", multi\nline note' },
      { customer_identifier: '4', source: 'review', points_amount: 5, internal_note: '+1 for the review', credits_amount: 1.25 },
      { customer_identifier: '1', source: 'manual', points_amount: 7, internal_note: '-deduct? no' },
      { customer_identifier: '4', source: 'manual', points_amount: -3, internal_note: '\tTabbed' },
    ];
    expect((await postBatch(t, events)).statusCode).toBe(201);
  });
  afterAll(() => t?.close());

  const csv = async (file: string, query: Record<string, string> = {}) => {
    const res = await t.request('GET', `${API}/exports/${file}`, { query });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="${file}"`);
    return res.body;
  };
  const records = (body: string) => parse(body, { columns: true }) as Record<string, string>[];

  it('writes the whole list, a header row and CRLF, quoting as RFC 4180 says, formulas escaped', async () => {
    const body = await csv('points_events.csv');
    expect(body.startsWith('id,customer.remote_id,customer.email,')).toBe(true);
    expect(body.endsWith('\r\n')).toBe(true);
    const rows = records(body);
    expect(rows.map((r) => [r.id, r['customer.remote_id'], r.points_amount, r.credits_amount, r.internal_note])).toEqual([
      ['1', '4', '10', '0', 'A "quoted", multi\nline note'],
      ['2', '4', '5', '1.25', "'+1 for the review"],
      ['3', '1', '7', '0', "'-deduct? no"],
      // A number is not a formula: -3 stays a number.
      ['4', '4', '-3', '0', "'\tTabbed"],
    ]);
    expect(rows[0]!.applied_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const eve = records(await csv('customers.csv')).find((r) => r.remote_id === '4')!;
    expect(eve).toMatchObject({
      email: 'eve@example.com',
      first_name: '\'=HYPERLINK("http://evil.example")',
      last_name: "'@SUM(A1)",
      points_balance: '12',
      credits_balance: '1.25',
    });
  });

  it("takes the list endpoint's filters, and only those", async () => {
    expect(records(await csv('points_events.csv', { customer_identifier: 'eve@example.com', source: 'manual' })).map((r) => r.id)).toEqual(['1', '4']);
    expect(records(await csv('customers.csv', { email: 'EVE@example.com' })).map((r) => r.remote_id)).toEqual(['4']);
    // An empty list is a header row alone.
    expect(await csv('redemptions.csv')).toMatch(/^id,reward\.id,reward\.name,customer\.remote_id,.*\r\n$/);
    expect(records(await csv('orders.csv'))).toEqual([]);
    const foreign = await t.request('GET', `${API}/exports/customers.csv`, { query: { source: 'manual' } });
    expect(foreign.statusCode).toBe(400);
    expect(errorOf(foreign).details).toEqual([expect.objectContaining({ param: 'source', code: 'unknown_parameter' })]);
    const bad = await t.request('GET', `${API}/exports/points_events.csv`, { query: { source: 'nonsense' } });
    expect(errorOf(bad)).toMatchObject({ code: 'invalid_parameter' });
    expect((await t.request('GET', `${API}/exports/rewards.csv`)).statusCode).toBe(404);
  });

  it('is what `loyalty export` writes, as CSV or NDJSON', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-export-'));
    try {
      const out = path.join(dir, 'events.csv');
      expect(await loyalty(t.url, 'export', 'points_events', '--shop', String(t.shop.id), '--out', out)).toMatchObject({ code: 0 });
      expect(fs.readFileSync(out, 'utf8')).toBe(await csv('points_events.csv'));
      const ndjson = await loyalty(t.url, 'export', 'customers', '--shop', String(t.shop.id), '--format', 'ndjson');
      expect(ndjson.code).toBe(0);
      const lines = ndjson.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((c) => c.remote_id)).toEqual([1, 2, 3, 4]);
      expect(lines[3]).toMatchObject({ first_name: '=HYPERLINK("http://evil.example")', points_balance: 12 });
      expect(await loyalty(t.url, 'export', 'rewards', '--shop', String(t.shop.id))).toMatchObject({ code: 2 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
