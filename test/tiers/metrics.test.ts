import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { retierShops, retierShopStep } from '../../src/tiers/jobs.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createCustomers, createWebhook, grant, storedDeliveries } from '../webhooks/fixtures.js';

// VIP tiers judged by another metric, and kept for a while after a drop (docs/earning.md, "VIP
// tiers"): amount spent in the shop's currency less refunds, paid orders, the threshold alias,
// re-tiering in steps after a change of metric, and retention ending at its instant. Each
// describe has its shop; its `it` blocks share it, in order.

const orderOf =
  (t: TestContext) =>
  async (id: number, customer: number, total: number, currency = 'EUR', status = 'paid', refunded = 0) => {
    const res = await t.request('PUT', `${API}/orders/${id}`, {
      body: {
        customer_remote_id: customer,
        total,
        currency,
        financial_status: status,
        total_refunded: refunded,
        placed_at: new Date(t.clock.now).toISOString(),
      },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
const customerOf = (t: TestContext) => async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
const tierOf = (t: TestContext) => async (id: number) => (await customerOf(t)(id)).vip_tier?.name ?? null;
const historyOf = (t: TestContext) => async (id: number) =>
  (await t.request('GET', `${API}/customers/${id}/vip_tier_history`, { query: { 'pagination[limit]': '50' } })).json().data as {
    from_tier: { name: string } | null;
    to_tier: { name: string } | null;
    metric: string;
    value: number;
    points_earned: number;
  }[];
const createTier = async (t: TestContext, body: Record<string, unknown>) => {
  const res = await t.request('POST', `${API}/vip_tiers`, { body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; threshold: number; points_threshold: number };
};

describe(`VIP tiers by amount spent (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());
  const order = (...args: Parameters<ReturnType<typeof orderOf>>) => orderOf(t)(...args);

  it('needs the shop currency for amount_spent', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: { vip_tier_metric: 'amount_spent' } });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).details).toEqual([expect.objectContaining({ param: 'vip_tier_metric', code: 'currency_required' })]);
    const ok = await t.request('PATCH', `${API}/shop`, { body: { vip_tier_metric: 'amount_spent', currency: 'EUR' } });
    expect(ok.json().data).toMatchObject({
      vip_tier_metric: 'amount_spent',
      currency: 'EUR',
      vip_tier_retention_days: null,
      restore_redeemed_points_on_refund: true,
    });
    expect(ok.json().data).not.toHaveProperty('vip_tier_basis');
    const unset = await t.request('PATCH', `${API}/shop`, { body: { currency: null } });
    expect(errorOf(unset).details).toEqual([expect.objectContaining({ param: 'currency', code: 'currency_required' })]);
  });

  it('takes a threshold by either name, shows both, and refuses two that differ or none', async () => {
    expect(await createTier(t, { name: 'Silver', threshold: 100 })).toMatchObject({ threshold: 100, points_threshold: 100 });
    expect(await createTier(t, { name: 'Gold', points_threshold: 300 })).toMatchObject({ threshold: 300, points_threshold: 300 });
    const both = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'X', threshold: 5, points_threshold: 6 } });
    expect(errorOf(both).details).toEqual([expect.objectContaining({ param: 'threshold', code: 'conflicting_parameters' })]);
    const none = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Y' } });
    expect(errorOf(none).details).toEqual([expect.objectContaining({ param: 'points_threshold', code: 'missing' })]);
    const taken = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Z', threshold: 100 } });
    expect(taken.statusCode).toBe(422);
    const sorted = await t.request('GET', `${API}/vip_tiers`, { query: { 'sort[order_type]': 'threshold', 'sort[order_direction]': 'desc' } });
    expect(sorted.json().data.map((tier: { name: string }) => tier.name)).toEqual(['Gold', 'Silver']);
    await retierShops(t.database.db, t.clock.now);
  });

  it('counts paid totals in the shop currency, less refunds, reaching a tier at exactly its threshold', async () => {
    await createWebhook(t, 'customer.vip_tier_changed');
    await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } });
    expect(await tierOf(t)(1)).toBeNull();
    await order(1, 1, 150);
    expect((await customerOf(t)(1)).vip_tier_progress).toEqual({
      metric: 'amount_spent',
      value: 150,
      points_earned: 0,
      next_tier: { id: expect.any(Number), name: 'Gold', threshold: 300, points_threshold: 300 },
      needed: 150,
      points_needed: 150,
    });
    expect(await tierOf(t)(1)).toBe('Silver');
    // Another currency counts nothing; a pending order neither.
    await order(2, 1, 500, 'USD');
    await order(3, 1, 500, 'EUR', 'pending');
    expect((await customerOf(t)(1)).vip_tier_progress.value).toBe(150);
    await order(4, 1, 150);
    expect(await customerOf(t)(1)).toMatchObject({ vip_tier: { name: 'Gold' }, vip_tier_progress: { value: 300, next_tier: null, needed: 0 } });
  });

  it('lowers the amount by refunds, and drops the customer at once without retention', async () => {
    await order(4, 1, 150, 'EUR', 'partially_refunded', 0.01);
    expect(await customerOf(t)(1)).toMatchObject({ vip_tier: { name: 'Silver' }, vip_tier_progress: { value: 299.99, needed: 0.01 } });
    await order(1, 1, 150, 'EUR', 'refunded', 150);
    expect((await customerOf(t)(1)).vip_tier_progress.value).toBe(149.99);
    const history = await historyOf(t)(1);
    expect(history.map((h) => [h.from_tier?.name ?? null, h.to_tier?.name ?? null])).toEqual([
      [null, 'Silver'],
      ['Silver', 'Gold'],
      ['Gold', 'Silver'],
    ]);
    expect(history.at(-1)).toMatchObject({ metric: 'amount_spent', value: 299.99, points_earned: 0 });
    const sent = (await storedDeliveries(t)).filter((d) => d.topic === 'customer.vip_tier_changed');
    expect(sent.at(-1)!.body.data).toMatchObject({ to_tier: { name: 'Silver' }, metric: 'amount_spent', value: 299.99 });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`VIP tiers by orders, after a change of metric (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createTier(t, { name: 'Regular', threshold: 1 });
    await createTier(t, { name: 'Loyal', threshold: 2 });
    await retierShops(t.database.db, t.clock.now);
    await createCustomers(
      t,
      Array.from({ length: 250 }, (_, i) => i + 1),
    );
  });
  afterAll(() => t.close());
  const order = (...args: Parameters<ReturnType<typeof orderOf>>) => orderOf(t)(...args);
  const status = async () => (await t.request('GET', `${API}/vip_tiers`)).json().data[0].recompute_status;

  it('re-tiers every customer in steps of at most 200, serving reads meanwhile', async () => {
    // Judged by points (none earned: no rule), nobody holds a tier.
    await order(1, 1, 10);
    await order(2, 1, 10);
    await order(3, 2, 10);
    await order(4, 2, 10, 'EUR', 'refunded', 10);
    await order(5, 2, 10, 'EUR', 'pending');
    await order(6, 250, 10, 'EUR', 'partially_refunded', 5);
    expect(await tierOf(t)(1)).toBeNull();
    expect((await t.request('PATCH', `${API}/shop`, { body: { vip_tier_metric: 'orders_count' } })).statusCode).toBe(200);
    expect(await status()).toBe('pending');
    expect(await tierOf(t)(1)).toBeNull();
    expect(await retierShopStep(t.database.db, t.shop.id, t.clock.now)).toBe(200);
    // Between steps: the first 200 are re-tiered, the rest not yet, and reads are served.
    expect(await status()).toBe('pending');
    expect(await tierOf(t)(1)).toBe('Loyal');
    expect(await tierOf(t)(2)).toBe('Regular');
    expect(await tierOf(t)(250)).toBeNull();
    expect(await retierShopStep(t.database.db, t.shop.id, t.clock.now)).toBe(50);
    expect(await status()).toBe('done');
    expect(await tierOf(t)(250)).toBe('Regular');
    expect((await customerOf(t)(250)).vip_tier_progress).toMatchObject({ metric: 'orders_count', value: 1, needed: 1 });
  });

  it('moves a customer with each order paid or refunded', async () => {
    await order(7, 250, 10);
    expect(await tierOf(t)(250)).toBe('Loyal');
    await order(7, 250, 10, 'EUR', 'refunded', 10);
    expect(await tierOf(t)(250)).toBe('Regular');
  });

  it('back to points earned: everyone is re-tiered by points', async () => {
    await t.request('PATCH', `${API}/shop`, { body: { vip_tier_metric: 'points_earned' } });
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(t)(1)).toBeNull();
    // And to orders again: the sums are made again, with the orders written meanwhile.
    await order(8, 3, 10);
    await t.request('PATCH', `${API}/shop`, { body: { vip_tier_metric: 'orders_count' } });
    await retierShops(t.database.db, t.clock.now);
    expect([await tierOf(t)(1), await tierOf(t)(3), await tierOf(t)(250)]).toEqual(['Loyal', 'Regular', 'Regular']);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`VIP tier retention (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createTier(t, { name: 'Silver', threshold: 100 });
    await createTier(t, { name: 'Gold', threshold: 300 });
    await retierShops(t.database.db, t.clock.now);
    expect((await t.request('PATCH', `${API}/shop`, { body: { vip_tier_retention_days: 30 } })).json().data.vip_tier_retention_days).toBe(30);
    await createCustomers(t, [1, 2]);
    await createWebhook(t, 'customer.vip_tier_changed');
  });
  afterAll(() => t.close());
  const earn = async (customer: number, points: number) => {
    const res = await t.request('POST', `${API}/points_events`, { body: grant(customer, points) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as number;
  };
  const reverse = async (id: number) => expect((await t.request('POST', `${API}/points_events/${id}/reverse`)).statusCode).toBe(201);

  it('moves a customer up at once, retention or not', async () => {
    await earn(2, 150);
    expect(await tierOf(t)(2)).toBe('Silver');
    await earn(2, 200);
    expect(await customerOf(t)(2)).toMatchObject({ vip_tier: { name: 'Gold' }, vip_tier_retained_until: null });
  });

  it('keeps a dropped tier until the retention ends, and forgets it when the customer climbs back', async () => {
    await earn(1, 100);
    const big = await earn(1, 250);
    expect(await tierOf(t)(1)).toBe('Gold');
    await reverse(big);
    const until = new Date(t.clock.now + 30 * DAY).toISOString();
    expect(await customerOf(t)(1)).toMatchObject({ vip_tier: { name: 'Gold' }, vip_tier_retained_until: until, vip_tier_progress: { value: 100 } });
    await earn(1, 200);
    expect(await customerOf(t)(1)).toMatchObject({ vip_tier: { name: 'Gold' }, vip_tier_retained_until: null });
  });

  it('moves the customer down exactly when the retention ends, by the job', async () => {
    const last = await earn(1, 1);
    await reverse(last);
    expect(await customerOf(t)(1)).toMatchObject({ vip_tier: { name: 'Gold' }, vip_tier_retained_until: null });
    const drop = (await t.request('GET', `${API}/customers/1/points_events`, { query: { 'pagination[limit]': '50' } }))
      .json()
      .data.filter((e: { points_amount: number; source: string }) => e.source === 'manual' && e.points_amount === 200)[0].id as number;
    await reverse(drop);
    const until = t.clock.now + 30 * DAY;
    expect((await customerOf(t)(1)).vip_tier_retained_until).toBe(new Date(until).toISOString());
    t.clock.advance(until - 1 - t.clock.now);
    await retierShops(t.database.db, t.clock.now);
    expect(await tierOf(t)(1)).toBe('Gold');
    t.clock.advance(1);
    // Nothing changes on a read: the job moves them.
    expect(await tierOf(t)(1)).toBe('Gold');
    await retierShops(t.database.db, t.clock.now);
    expect(await customerOf(t)(1)).toMatchObject({ vip_tier: { name: 'Silver' }, vip_tier_retained_until: null });
    const history = await historyOf(t)(1);
    expect(history.map((h) => [h.from_tier?.name ?? null, h.to_tier?.name ?? null])).toEqual([
      [null, 'Silver'],
      ['Silver', 'Gold'],
      ['Gold', 'Silver'],
    ]);
    const sent = (await storedDeliveries(t)).filter((d) => d.topic === 'customer.vip_tier_changed' && d.body.data.customer.remote_id === 1);
    expect(sent.at(-1)!.body.data).toMatchObject({ from_tier: { name: 'Gold' }, to_tier: { name: 'Silver' }, points_earned: 100 });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
