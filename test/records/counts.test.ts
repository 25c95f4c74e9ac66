import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createCustomers, postBatch } from '../ledger/fixtures.js';

// An unfiltered offset page reads its `last` link from the shop's stored row count, kept by
// triggers with every insert and delete; a filtered one counts. The `it` blocks share one shop.

describe(`stored row counts behind offset pages (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { publicUrl: 'https://api.example.com' } });
  });
  afterAll(() => t.close());

  const lastPage = async (path: string) => {
    const res = await t.request('GET', `${API}/${path}`);
    expect(res.statusCode, res.body).toBe(200);
    return Number(new URL(res.json().links.last).searchParams.get('pagination[page]'));
  };
  const setCount = (table: string, n: number) =>
    t.database.db.updateTable('shop_counts').set({ n }).where('shop_id', '=', t.shop.id).where('table_name', '=', table).execute();

  it("follows creates and deletes, and counts only the shop's own rows", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.request('POST', `${API}/rewards`, { body: { name: `R${i}`, points_price: 10, kind: 'free_shipping' } });
      ids.push(res.json().data.id);
    }
    const other = await t.createShop();
    for (let i = 0; i < 3; i++)
      await t.request('POST', `${API}/rewards`, { body: { name: `O${i}`, points_price: 10, kind: 'free_shipping' }, token: other.token });
    expect(await lastPage('rewards?pagination[per_page]=2')).toBe(3);
    expect((await t.request('DELETE', `${API}/rewards/${ids[0]}`)).statusCode).toBe(200);
    expect(await lastPage('rewards?pagination[per_page]=2')).toBe(2);
    expect(await lastPage('rewards?pagination[per_page]=1&pagination[page]=2')).toBe(4);
  });

  it('reads the stored count for an unfiltered list, and loyalty verify notices one that is wrong', async () => {
    await setCount('rewards', 100);
    expect(await lastPage('rewards?pagination[per_page]=2')).toBe(50);
    expect(await verifyLedger(t.database.db, t.shop.id)).toEqual([
      expect.objectContaining({ check: "shop_counts = the shop's rows of each listed table", subject: 'rewards', expected: '4', actual: '100' }),
    ]);
    await setCount('rewards', 4);
    expect(await verifyLedger(t.database.db, t.shop.id)).toEqual([]);
  });

  it('counts a filtered list instead', async () => {
    await createCustomers(t, 3);
    await postBatch(t, [
      { customer_identifier: '1', source: 'manual', points_amount: 5 },
      { customer_identifier: '2', source: 'order', points_amount: 5 },
      { customer_identifier: '3', source: 'manual', points_amount: 5 },
    ]);
    expect(await lastPage('points_events?pagination[per_page]=1')).toBe(3);
    await setCount('points_events', 40);
    expect(await lastPage('points_events?pagination[per_page]=1')).toBe(40);
    expect(await lastPage('points_events?pagination[per_page]=1&source=manual')).toBe(2);
    expect(await lastPage('customers/1/points_events?pagination[per_page]=1')).toBe(1);
    await setCount('points_events', 3);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
