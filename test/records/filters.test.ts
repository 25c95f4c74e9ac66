import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';

// Filters of the customers list: by e-mail and by updated_at, in both pagination modes.
// The `it` blocks share one shop and its clock, in order.

describe(`customers list filters (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { publicUrl: 'https://api.example.com' } });
    for (let id = 1; id <= 5; id++) {
      await t.request('PUT', `${API}/customers/${id}`, { body: { email: `Customer${id}@Example.com` } });
      t.clock.advance(DAY);
    }
  });
  afterAll(() => t.close());

  const ids = async (query: Record<string, string>) => {
    const res = await t.request('GET', `${API}/customers`, { query });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.map((c: { remote_id: number }) => c.remote_id);
  };

  it('finds a customer by e-mail, case-insensitively', async () => {
    expect(await ids({ email: 'customer3@example.COM' })).toEqual([3]);
    expect(await ids({ email: 'nobody@example.com', 'pagination[limit]': '5' })).toEqual([]);
  });

  it('lists the customers changed in a time range, in both modes, with links that keep the filter', async () => {
    const start = new Date(t.clock.now - 5 * DAY).toISOString();
    const third = new Date(t.clock.now - 3 * DAY).toISOString();
    expect(await ids({ 'updated_at[gte]': third })).toEqual([3, 4, 5]);
    expect(await ids({ 'updated_at[gt]': start, 'updated_at[lt]': third, 'pagination[limit]': '10' })).toEqual([2]);
    const page = await t.request('GET', `${API}/customers`, { query: { 'updated_at[gte]': third, 'pagination[per_page]': '2' } });
    expect(page.json().links.next).toContain('updated_at[gte]=');
    expect(page.json().links.last).toContain('pagination[page]=2');
  });

  it('refuses a bad filter value by name', async () => {
    const res = await t.request('GET', `${API}/customers`, { query: { 'updated_at[gte]': 'yesterday', vip_tier_id: 'gold' } });
    expect(res.statusCode).toBe(400);
    expect(
      errorOf(res)
        .details!.map((d) => d.param)
        .sort(),
    ).toEqual(['updated_at[gte]', 'vip_tier_id']);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`unknown query parameters (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('are refused by name on lists and on single records, as unknown body fields are', async () => {
    // A mistyped filter would otherwise list every customer's events.
    const typo = await t.request('GET', `${API}/points_events`, { query: { customer_identifer: '123', 'pagination[limit]': '5' } });
    expect(typo.statusCode).toBe(400);
    expect(errorOf(typo)).toMatchObject({ code: 'invalid_parameter', details: [{ param: 'customer_identifer', code: 'unknown_parameter' }] });
    const two = await t.request('GET', `${API}/shop`, { query: { a: '1', b: '2' } });
    expect(errorOf(two).details!.map((d) => d.param)).toEqual(['a', 'b']);
    expect((await t.request('GET', `${API}/points_events`, { query: { source: 'order', 'applied_at[gte]': '2026-01-01T00:00:00Z' } })).statusCode).toBe(200);
  });

  it('are refused on every endpoint of the API, before anything is written', async () => {
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Mug', points_price: 10, kind: 'free_product', value: 5 } })).json().data;
    const doc = (await t.request('GET', '/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith(API))
      .flatMap(([path, item]) =>
        Object.keys(item)
          .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
          .map((method) => ({ method, path })),
      );
    expect(operations.length).toBeGreaterThan(40);
    for (const { method, path } of operations) {
      const url = path.replace(/\{[^}]+\}/g, String(reward.id));
      const res = await t.request(method.toUpperCase() as 'GET', `${url}?zz_typo=1`, method === 'get' || method === 'delete' ? {} : { body: {} });
      expect(res.statusCode, `${method.toUpperCase()} ${path}`).toBe(400);
      expect(errorOf(res).details, `${method.toUpperCase()} ${path}`).toEqual([expect.objectContaining({ param: 'zz_typo', code: 'unknown_parameter' })]);
    }
    // DELETE /rewards/{id} among them: refused, so the reward is still there.
    expect((await t.request('GET', `${API}/rewards/${reward.id}`)).statusCode).toBe(200);
  });

  it('filter points events by customer_identifier, in both modes', async () => {
    for (const id of [1, 2]) await t.request('PUT', `${API}/customers/${id}`, { body: { email: `c${id}@example.com` } });
    for (const id of [1, 2, 1])
      await t.request('POST', `${API}/points_events`, { body: { customer_identifier: String(id), source: 'manual', points_amount: 5 } });
    const of = async (query: Record<string, string>) =>
      (await t.request('GET', `${API}/points_events`, { query })).json().data.map((e: { customer: { remote_id: number } }) => e.customer.remote_id);
    expect(await of({ customer_identifier: 'C1@example.com' })).toEqual([1, 1]);
    expect(await of({ customer_identifier: '2', 'pagination[limit]': '10' })).toEqual([2]);
    expect(await of({ customer_identifier: '999' })).toEqual([]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
