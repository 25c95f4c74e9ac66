import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retierShops } from '../../src/tiers/jobs.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';

// The shop's vip_tier_window (docs/earning.md, "VIP tiers"): tiers judged by the points earned
// over a rolling 12 months or this calendar year, with the clock moved by the test and the
// background job run as the window moves on. The `it` blocks share one shop, in order.

describe(`VIP tier windows (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    // 15 January 2026, noon UTC.
    t = await setup();
    for (const body of [
      { name: 'Bronze', points_threshold: 0 },
      { name: 'Silver', points_threshold: 100 },
      { name: 'Gold', points_threshold: 300 },
    ]) {
      expect((await t.request('POST', `${API}/vip_tiers`, { body })).statusCode).toBe(201);
    }
    expect((await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1 } })).statusCode).toBe(201);
    await retierShops(t.database.db, t.clock.now);
  });
  afterAll(() => t.close());

  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const order = async (id: number, customerId: number, total: number, status = 'paid', refunded = 0) => {
    const res = await t.request('PUT', `${API}/orders/${id}`, {
      body: {
        customer_remote_id: customerId,
        total,
        currency: 'EUR',
        financial_status: status,
        total_refunded: refunded,
        placed_at: new Date(t.clock.now).toISOString(),
      },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json().data;
  };
  const tierOf = async (id: number) => ({ tier: (await customer(id)).vip_tier?.name ?? null, earned: (await customer(id)).vip_tier_progress.points_earned });
  const setWindow = async (window: string) => {
    const res = await t.request('PATCH', `${API}/shop`, { body: { vip_tier_window: window } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.vip_tier_window).toBe(window);
  };

  it('refuses a window that is not one of the three', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: { vip_tier_window: 'forever' } });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).details?.[0]?.param).toBe('vip_tier_window');
    expect((await t.request('GET', `${API}/shop`)).json().data.vip_tier_window).toBe('lifetime');
  });

  it('on a rolling window: climbs through orders, drops back on a refund, and drops as old points leave the window', async () => {
    await setWindow('rolling_12_months');
    await retierShops(t.database.db, t.clock.now);
    await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } });
    expect(await tierOf(1)).toEqual({ tier: 'Bronze', earned: 0 });
    await order(1, 1, 150);
    expect(await tierOf(1)).toEqual({ tier: 'Silver', earned: 150 });
    // Five months later: 200 more reach Gold.
    t.clock.advance(150 * DAY);
    await retierShops(t.database.db, t.clock.now);
    await order(2, 1, 200);
    expect(await tierOf(1)).toEqual({ tier: 'Gold', earned: 350 });
    // A partial refund of the first order takes 100 back from the day it was earned: Silver.
    await order(1, 1, 150, 'partially_refunded', 100);
    expect(await tierOf(1)).toEqual({ tier: 'Silver', earned: 250 });

    // The first order's day is still in the window 12 months on, and out of it the day after.
    t.clock.advance(364 * DAY - 150 * DAY);
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(1)).toEqual({ tier: 'Silver', earned: 250 });
    t.clock.advance(2 * DAY);
    // Nothing changes on a read: only the job (or the customer's next event) moves the window.
    expect(await tierOf(1)).toEqual({ tier: 'Silver', earned: 250 });
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(1)).toEqual({ tier: 'Silver', earned: 200 });
    const history = (await t.request('GET', `${API}/customers/1/vip_tier_history`, { query: { 'pagination[limit]': '50' } })).json().data;
    expect(history.map((c: { to_tier: { name: string } | null }) => c.to_tier?.name)).toEqual(['Bronze', 'Silver', 'Gold', 'Silver']);
    // And the second order leaves the window five months later.
    t.clock.advance(150 * DAY);
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(1)).toEqual({ tier: 'Bronze', earned: 0 });
    expect((await customer(1)).points_earned_lifetime).toBe(250);
  });

  it("sums the window again on the customer's next event, before the job has run", async () => {
    await order(3, 1, 120);
    expect(await tierOf(1)).toEqual({ tier: 'Silver', earned: 120 });
    t.clock.advance(366 * DAY);
    await order(4, 1, 90);
    expect(await tierOf(1)).toEqual({ tier: 'Bronze', earned: 90 });
  });

  it('on the calendar year: starts from zero on 1 January', async () => {
    await setWindow('calendar_year');
    await retierShops(t.database.db, t.clock.now);
    const year = new Date(t.clock.now).getUTCFullYear();
    expect(await tierOf(1)).toEqual({ tier: 'Bronze', earned: 90 });
    await order(5, 1, 300);
    expect(await tierOf(1)).toEqual({ tier: 'Gold', earned: 390 });
    t.clock.now = Date.UTC(year, 11, 31, 23, 0, 0);
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(1)).toEqual({ tier: 'Gold', earned: 390 });
    t.clock.now = Date.UTC(year + 1, 0, 1, 0, 30, 0);
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(1)).toEqual({ tier: 'Bronze', earned: 0 });
  });

  it('on the lifetime again: everything earned counts', async () => {
    await setWindow('lifetime');
    expect((await customer(1)).vip_tier.name).toBe('Bronze');
    await retierShops(t.database.db, t.clock.now);
    const lifetime = (await customer(1)).points_earned_lifetime;
    expect(lifetime).toBe(250 + 120 + 90 + 300);
    expect(await tierOf(1)).toEqual({ tier: 'Gold', earned: lifetime });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
