import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';

// GET /customers/{customer_identifier}/export: everything stored about one customer, as one
// streamed JSON document. The `it` blocks share one shop, in order.

describe(`customer export (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('holds the customer and every record about them, and nothing about anyone else', async () => {
    await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1 } });
    await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Bronze', points_threshold: 0 } });
    for (const id of [1, 2]) await t.request('PUT', `${API}/customers/${id}`, { body: { email: `c${id}@example.com`, first_name: `C${id}` } });
    // More events than one read chunk (500), so that the stream is read in pieces.
    const events = Array.from({ length: 600 }, () => ({ customer_identifier: '1', source: 'manual', points_amount: 2 }));
    expect((await t.request('POST', `${API}/points_events/batch`, { body: { points_events: events } })).statusCode).toBe(201);
    await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '2', source: 'manual', points_amount: 7 } });
    await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 1, referred_email: 'friend@example.com' } });
    await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 2, referred_email: 'C1@example.com' } });
    await t.request('PUT', `${API}/orders/10`, {
      body: { customer_remote_id: 1, total: 30, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-10T00:00:00Z' },
    });
    await t.request('PUT', `${API}/orders/11`, {
      body: { customer_remote_id: 2, total: 30, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-10T00:00:00Z' },
    });
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Tote', points_price: 100, kind: 'free_product', value: 10 } })).json().data;
    await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '1' } });

    const res = await t.request('GET', `${API}/customers/c1@example.com/export`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const { data } = res.json();
    expect(data.customer).toEqual((await t.request('GET', `${API}/customers/1`)).json().data);
    expect(data.points_events).toHaveLength(600 + 2);
    expect(data.points_events.every((e: { customer: { remote_id: number } }) => e.customer.remote_id === 1)).toBe(true);
    expect(data.points_events.map((e: { id: number }) => e.id)).toEqual(
      [...data.points_events.map((e: { id: number }) => e.id)].sort((a: number, b: number) => a - b),
    );
    expect(data.points_lots).toHaveLength(601);
    expect(data.orders.map((o: { remote_id: number }) => o.remote_id)).toEqual([10]);
    expect(data.redemptions).toHaveLength(1);
    expect(data.referrals.map((r: { referred_email: string }) => r.referred_email).sort()).toEqual(['C1@example.com', 'friend@example.com']);
    expect(data.vip_tier_history).toEqual([expect.objectContaining({ to_tier: expect.objectContaining({ name: 'Bronze' }) })]);
    expect(data.subscription_contracts).toEqual([]);
    expect((await t.request('GET', `${API}/customers/404404/export`)).statusCode).toBe(404);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
