import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retierShops } from '../../src/tiers/jobs.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createWebhook, storedDeliveries } from '../webhooks/fixtures.js';

// VIP tiers that customers reach by the points they earn (docs/earning.md, "VIP tiers"), over
// HTTP. The `it` blocks share one shop, in order.

describe(`VIP tiers (${TEST_DIALECT})`, () => {
  let t: TestContext;
  const tier: Record<string, number> = {};
  beforeAll(async () => {
    t = await setup();
    for (const body of [
      { name: 'Bronze', points_threshold: 0 },
      { name: 'Silver', points_threshold: 100 },
      { name: 'Gold', points_threshold: 300, earning_multiplier: 2 },
    ]) {
      const res = await t.request('POST', `${API}/vip_tiers`, { body });
      expect(res.statusCode, res.body).toBe(201);
      tier[body.name] = res.json().data.id;
    }
    expect((await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1 } })).statusCode).toBe(201);
    await retierShops(t.database.db, t.clock.now);
    await createWebhook(t, 'customer.vip_tier_changed');
  });
  afterAll(() => t.close());

  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const order = (id: number, total: number, status = 'paid', refunded = 0) =>
    t.request('PUT', `${API}/orders/${id}`, {
      body: { customer_remote_id: 1, total, currency: 'EUR', financial_status: status, total_refunded: refunded, placed_at: '2026-01-15T10:00:00Z' },
    });
  const history = async (id: number) =>
    (await t.request('GET', `${API}/customers/${id}/vip_tier_history`, { query: { 'pagination[limit]': '50' } }))
      .json()
      .data.map((c: { from_tier: { name: string } | null; to_tier: { name: string } | null }) => [c.from_tier?.name ?? null, c.to_tier?.name ?? null]);

  it('tiers a new customer at once, and moves them up as their orders earn', async () => {
    expect((await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } })).json().data).toMatchObject({
      vip_tier: { id: tier.Bronze, name: 'Bronze' },
      vip_tier_progress: { points_earned: 0, next_tier: { id: tier.Silver, name: 'Silver', points_threshold: 100 }, points_needed: 100 },
    });
    expect((await order(1, 150)).json().data).toMatchObject({ points_earned: 150 });
    expect(await customer(1)).toMatchObject({ vip_tier: { name: 'Silver' }, vip_tier_progress: { points_earned: 150, points_needed: 150 } });
    expect(await history(1)).toEqual([
      [null, 'Bronze'],
      ['Bronze', 'Silver'],
    ]);
  });

  it("applies a tier's multiplier to the order after the one that reached it", async () => {
    // Reaches Gold (350 earned), at Silver's multiplier of 1.
    expect((await order(2, 200)).json().data).toMatchObject({ points_earned: 200 });
    expect(await customer(1)).toMatchObject({ vip_tier: { name: 'Gold' }, vip_tier_progress: { points_earned: 350, next_tier: null, points_needed: 0 } });
    // The next order earns Gold's 2×.
    expect((await order(3, 100)).json().data).toMatchObject({ points_earned: 200 });
    const preview = await t.request('POST', `${API}/earning_rules/preview`, { body: { customer_identifier: '1', total: 10, currency: 'EUR' } });
    expect(preview.json().data).toMatchObject({ points: 20, multiplier: 2 });
    expect(await customer(1)).toMatchObject({ points_earned_lifetime: 550 });
  });

  it('drops a customer when refunds take back the points that reached the tier', async () => {
    await order(3, 100, 'refunded', 100);
    await order(2, 200, 'refunded', 200);
    expect(await customer(1)).toMatchObject({ points_earned_lifetime: 150, vip_tier: { name: 'Silver' } });
    expect(await history(1)).toEqual([
      [null, 'Bronze'],
      ['Bronze', 'Silver'],
      ['Silver', 'Gold'],
      ['Gold', 'Silver'],
    ]);
    const sent = (await storedDeliveries(t))
      .filter((d) => d.topic === 'customer.vip_tier_changed')
      .map((d) => [d.body.data.from_tier?.name ?? null, d.body.data.to_tier?.name ?? null]);
    expect(sent).toEqual(await history(1));
    expect((await storedDeliveries(t)).at(-1)!.body.data).toMatchObject({ customer: { remote_id: 1, email: 'ada@example.com' }, points_earned: 150 });
  });

  it("re-tiers the shop's customers in the background when a tier changes, and says when it is done", async () => {
    await t.request('PUT', `${API}/customers/2`, { body: { email: 'grace@example.com' } });
    const patched = await t.request('PATCH', `${API}/vip_tiers/${tier.Gold}`, { body: { points_threshold: 120 } });
    expect(patched.json().data).toMatchObject({ points_threshold: 120, earning_multiplier: 2, recompute_status: 'pending' });
    // Tiers never change on a read.
    expect(await customer(1)).toMatchObject({ vip_tier: { name: 'Silver' } });
    expect(await retierShops(t.database.db, t.clock.now)).toBe(2);
    expect((await t.request('GET', `${API}/vip_tiers/${tier.Gold}`)).json().data).toMatchObject({ recompute_status: 'done' });
    expect(await customer(1)).toMatchObject({ vip_tier: { name: 'Gold' } });
    expect(await customer(2)).toMatchObject({ vip_tier: { name: 'Bronze' } });
    // A tier's members, in both pagination modes.
    const members = async (id: number, query: Record<string, string> = {}) =>
      (await t.request('GET', `${API}/customers`, { query: { vip_tier_id: String(id), ...query } })).json().data.map((c: { remote_id: number }) => c.remote_id);
    expect(await members(tier.Gold!)).toEqual([1]);
    expect(await members(tier.Bronze!, { 'pagination[limit]': '10' })).toEqual([2]);
    expect(await members(tier.Silver!)).toEqual([]);

    expect((await t.request('DELETE', `${API}/vip_tiers/${tier.Bronze}`)).statusCode).toBe(200);
    await retierShops(t.database.db, t.clock.now);
    expect(await customer(2)).toMatchObject({ vip_tier: null, vip_tier_progress: { next_tier: { name: 'Silver' }, points_needed: 100 } });
    expect((await history(2)).at(-1)).toEqual(['Bronze', null]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
