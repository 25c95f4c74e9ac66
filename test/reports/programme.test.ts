import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch } from '../ledger/fixtures.js';

// GET /reports/programme: the programme's figures, from counters kept where they change.

describe(`the programme report (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 6);
  });
  afterAll(() => t?.close());

  const created = async (path: string, body: unknown) => {
    const res = await t.request('POST', `${API}/${path}`, { body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number };
  };
  const report = async () => {
    const res = await t.request('GET', `${API}/reports/programme`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  it("counts customers, balances, tier members and the last 30 days' redemptions", async () => {
    expect(await report()).toEqual({
      customers: 6,
      customers_with_points: 0,
      members_by_tier: [{ vip_tier: null, customers: 6 }],
      points_outstanding: 0,
      points_pending: 0,
      credits_outstanding: 0,
      redemptions_last_30_days: 0,
      top_rewards: [],
    });
    const silver = await created('vip_tiers', { name: 'Silver', points_threshold: 100 });
    const gold = await created('vip_tiers', { name: 'Gold', points_threshold: 1000 });
    const grants = [1500, 1200, 300, 150, 50].map((points, i) => ({
      customer_identifier: String(i + 1),
      source: 'manual',
      points_amount: points,
      credits_amount: i / 2,
    }));
    expect((await postBatch(t, grants)).statusCode).toBe(201);
    const coffee = await created('rewards', { name: 'Coffee', kind: 'fixed_amount_discount', value: 3, points_price: 100 });
    const cake = await created('rewards', { name: 'Cake', kind: 'fixed_amount_discount', value: 5, points_price: 50 });
    for (const [reward, customer] of [
      [coffee, 1],
      [cake, 2],
      [cake, 3],
      [coffee, 1],
      [cake, 4],
    ] as const)
      await created('redemptions', { reward_id: reward.id, customer_identifier: String(customer) });

    expect(await report()).toEqual({
      customers: 6,
      customers_with_points: 5,
      members_by_tier: [
        { vip_tier: null, customers: 2 },
        { vip_tier: { id: silver.id, name: 'Silver' }, customers: 2 },
        { vip_tier: { id: gold.id, name: 'Gold' }, customers: 2 },
      ],
      points_outstanding: 3200 - 350,
      points_pending: 0,
      credits_outstanding: 5,
      redemptions_last_30_days: 5,
      top_rewards: [
        { reward: { id: cake.id, name: 'Cake' }, redemptions: 3 },
        { reward: { id: coffee.id, name: 'Coffee' }, redemptions: 2 },
      ],
    });

    // A month later the redemptions are out of the window; a customer spent all and left the tier count as it was.
    t.clock.advance(31 * DAY);
    expect((await postBatch(t, [{ customer_identifier: '5', source: 'manual', points_amount: -50 }])).statusCode).toBe(201);
    expect(await report()).toMatchObject({ customers_with_points: 4, points_outstanding: 2800, redemptions_last_30_days: 0, top_rewards: [] });
    // An erased customer is no longer counted, nor a member of their tier; their points stay outstanding.
    expect((await t.request('DELETE', `${API}/customers/1`)).statusCode).toBe(200);
    expect(await report()).toMatchObject({
      customers: 5,
      members_by_tier: [
        { vip_tier: null, customers: 2 },
        { vip_tier: { id: silver.id }, customers: 2 },
        { vip_tier: { id: gold.id }, customers: 1 },
      ],
      points_outstanding: 2800,
    });
    await expectConsistentLedger(t);
  });
});
