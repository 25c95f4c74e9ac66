import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../../src/db/dialect.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, postBatch } from '../ledger/fixtures.js';

// Customers sort by their balances (offset mode, stable: ties by remote_id), each sort served
// by an index on (shop_id, column, remote_id).

const SORTS = ['points_balance', 'points_earned_lifetime', 'credits_balance'] as const;

describe(`customers sorted by balance (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 30);
    // Three values each, so that ties are many; deductions make balance and earned differ.
    const events = Array.from({ length: 30 }, (_, i) => ({
      customer_identifier: String(i + 1),
      source: 'manual',
      points_amount: 10 * ((i * 7) % 3) + 5,
      credits_amount: (i % 4) / 2 + 1,
    }));
    expect((await postBatch(t, events)).statusCode).toBe(201);
    const deductions = Array.from({ length: 10 }, (_, i) => ({ customer_identifier: String(3 * i + 1), source: 'manual', points_amount: -5 }));
    expect((await postBatch(t, deductions)).statusCode).toBe(201);
  });
  afterAll(() => t?.close());

  it.each(
    SORTS.flatMap(
      (s) =>
        [
          [s, 'asc'],
          [s, 'desc'],
        ] as const,
    ),
  )('by %s %s, ties by remote_id, page after page', async (field, direction) => {
    const all = (await t.request('GET', `${API}/customers`, { query: { 'pagination[per_page]': '250' } })).json().data as Record<string, number>[];
    const sign = direction === 'asc' ? 1 : -1;
    const expected = [...all].sort((a, b) => sign * (a[field]! - b[field]!) || sign * (a.remote_id! - b.remote_id!)).map((c) => c.remote_id);
    const pages: number[] = [];
    for (let page = 1; page <= 4; page++) {
      const res = await t.request('GET', `${API}/customers`, {
        query: { 'sort[order_type]': field, 'sort[order_direction]': direction, 'pagination[per_page]': '8', 'pagination[page]': String(page) },
      });
      expect(res.statusCode, res.body).toBe(200);
      pages.push(...res.json().data.map((c: { remote_id: number }) => c.remote_id));
    }
    expect(pages).toEqual(expected);
    expect(new Set(all.map((c) => c[field])).size).toBeLessThan(all.length);
  });

  it.each(SORTS)('reads a page by %s through its index, without sorting', async (field) => {
    const db = t.database.db;
    const query = `select remote_id from customers where shop_id = ${t.shop.id} order by ${field} desc, remote_id desc limit 25 offset 5`;
    if (isPostgres(db)) {
      // The table is small: the planner is told to use an index when one can serve the order.
      const plan = await db.connection().execute(async (c) => {
        await sql`set enable_seqscan = off`.execute(c);
        await sql`set enable_sort = off`.execute(c);
        const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${sql.raw(query)}`.execute(c);
        await sql`reset all`.execute(c);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
      expect(plan).toContain(`customers_${field}`);
      expect(plan).not.toMatch(/\bSort\b/);
    } else {
      const { rows } = await sql<{ detail: string }>`explain query plan ${sql.raw(query)}`.execute(db);
      const plan = rows.map((r) => r.detail).join(' | ');
      expect(plan).toContain(`INDEX customers_${field}`);
      expect(plan).not.toContain('TEMP B-TREE');
    }
  });
});
