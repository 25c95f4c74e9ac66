import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

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
    expect(errorOf(res).details!.map((d) => d.param).sort()).toEqual(['updated_at[gte]', 'vip_tier_id']);
  });
});
