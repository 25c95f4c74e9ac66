import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { cliContext, type CliContext, type CliShop } from '../helpers/cli.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { DemoSummary } from '../../src/cli/demo.js';

// `loyalty demo --shop <id> --customers N`: sample data a merchant can try the API on, checked
// over HTTP for what a merchant would rely on (balances that the ledger explains). Re-running it
// is harmless: customers already there are left alone, so nothing is credited twice.

type Seeded = DemoSummary;

interface Snapshot {
  customers: any[];
  orders: any[];
  rewards: any[];
  tiers: any[];
  events: any[];
}

describe(`loyalty demo (${TEST_DIALECT})`, () => {
  let t: CliContext;
  let shop: CliShop;
  beforeAll(async () => {
    t = await cliContext();
    shop = await t.createShop('Demo');
  });
  afterAll(() => t?.close());

  const demo = async (target: CliShop, customers: number): Promise<Seeded> => {
    const out = await t.ok('demo', '--shop', String(target.shop.id), '--customers', String(customers), '--json');
    const seeded = JSON.parse(out) as Seeded;
    expect(Object.keys(seeded).sort()).toEqual(['customers', 'earning_rules', 'orders', 'points_events', 'redemptions', 'rewards', 'vip_tiers']);
    return seeded;
  };

  const post = (target: CliShop, path: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: `${API}/${path}`, headers: { authorization: `Bearer ${target.token}` }, payload });

  const snapshot = async (target: CliShop): Promise<Snapshot> => ({
    customers: await t.all(target.token, 'customers'),
    orders: await t.all(target.token, 'orders'),
    rewards: await t.all(target.token, 'rewards'),
    tiers: await t.all(target.token, 'vip_tiers'),
    events: await t.all(target.token, 'points_events'),
  });

  /** Every balance is what the customer's events add up to, and every paid order earned its points. */
  const expectConsistent = (s: Snapshot) => {
    const sums = new Map<number, number>();
    for (const e of s.events) sums.set(e.customer.remote_id, (sums.get(e.customer.remote_id) ?? 0) + e.points_amount);
    for (const c of s.customers) {
      expect(c.points_balance, `customer ${c.remote_id}`).toBe(sums.get(c.remote_id) ?? 0);
      expect(c.points_balance).toBeGreaterThanOrEqual(0);
      expect(c.credits_balance).toBe(0);
    }
    // No event names a customer that is not there.
    const ids = new Set(s.customers.map((c) => c.remote_id));
    expect(s.events.filter((e) => !ids.has(e.customer.remote_id))).toEqual([]);
    // One welcome bonus per customer.
    expect(
      s.events
        .filter((e) => e.source === 'signup')
        .map((e) => e.customer.remote_id)
        .sort((a, b) => a - b),
    ).toEqual([...ids].sort((a, b) => a - b));
    // By the demo's order rule, a point per whole euro of each paid order, times the tier the
    // customer held then, credited to its customer once; refunds take back their share; a
    // refunded order earned nothing.
    for (const order of s.orders) {
      const own = s.events.filter((e) => e.order_remote_id === order.remote_id);
      const earned = own.filter((e) => e.source === 'order');
      if (order.financial_status === 'paid' || order.financial_status === 'partially_refunded') {
        expect(earned, `order ${order.remote_id}`).toHaveLength(1);
        expect(earned[0]).toMatchObject({ customer: { remote_id: order.customer_remote_id }, points_amount: order.points_earned });
        const base = Math.floor(order.total);
        expect([base, ...s.tiers.map((v) => Math.floor(base * v.earning_multiplier))]).toContain(order.points_earned);
      } else {
        expect(earned, `order ${order.remote_id}`).toEqual([]);
      }
      const refunds = own.filter((e) => e.source === 'refund');
      expect(refunds.reduce((sum, e) => sum - e.points_amount, 0)).toBe(order.points_reversed);
    }
    // Redemptions spent their reward's price.
    const prices = s.rewards.map((r) => -r.points_price);
    for (const e of s.events.filter((x) => x.source === 'reward_redemption')) {
      expect(e).toMatchObject({ redemption_id: expect.any(Number) });
      expect(prices).toContain(e.points_amount);
    }
  };

  it('seeds customers, orders, rewards, VIP tiers and points events, and balances add up', async () => {
    const seeded = await demo(shop, 50);
    expect(seeded).toMatchObject({ customers: 50, earning_rules: 2, rewards: 4, vip_tiers: 3 });
    expect(seeded.orders).toBeGreaterThan(0);
    expect(seeded.points_events).toBeGreaterThan(50);

    const s = await snapshot(shop);
    expect(s.customers.map((c) => c.remote_id)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    for (const c of s.customers) expect(c.email).toMatch(/^[a-z]+\.[a-z]+\.\d+@example\.com$/);
    expect(s.orders).toHaveLength(seeded.orders);
    for (const o of s.orders) expect(o.customer_remote_id).toBeGreaterThanOrEqual(1);
    expect(s.orders.some((o) => o.financial_status === 'paid')).toBe(true);
    expect(s.rewards.map((r) => r.name).sort()).toEqual(['10% off your next order', '5 € off your next order', 'Free shipping', 'Free tote bag']);
    expect(s.tiers.map((v) => [v.name, v.points_threshold, v.earning_multiplier])).toEqual([
      ['Bronze', 0, 1],
      ['Silver', 500, 1.25],
      ['Gold', 1200, 1.5],
    ]);
    expect(s.events).toHaveLength(seeded.points_events);
    const sources = new Set(s.events.map((e) => e.source));
    const kinds = ['signup', 'order', 'refund', 'reward_redemption', 'manual', 'expiration'];
    for (const source of kinds) expect(sources.has(source), source).toBe(true);
    expect([...sources].filter((x) => !kinds.includes(x))).toEqual([]);
    expect(seeded.redemptions).toBe(s.events.filter((e) => e.source === 'reward_redemption').length);
    expectConsistent(s);

    // The per-customer ledger agrees with the shop's.
    const someone = s.customers.find((c) => c.points_balance > 100)!;
    const own = await t.all(shop.token, `customers/${someone.remote_id}/points_events`);
    expect(own.reduce((sum, e) => sum + e.points_amount, 0)).toBe(someone.points_balance);

    // 90 days of history, not one: events on many days over the last 90, bonus points expiring
    // on their day, customers in every tier, and the run in the audit log, by the command line.
    const days = new Set(s.events.map((e) => e.applied_at.slice(0, 10)));
    expect(days.size).toBeGreaterThan(40);
    const times = s.events.map((e) => Date.parse(e.applied_at));
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(80 * 86_400_000);
    expect(Math.max(...times)).toBeLessThan(Date.now());
    for (const e of s.events.filter((x) => x.source === 'expiration')) expect(Date.parse(e.applied_at)).toBeLessThan(Date.now() - 86_400_000);
    expect(new Set(s.customers.map((c) => c.vip_tier?.name)).size).toBe(3);
    // The higher tiers earn more: some orders earned above a point per euro.
    expect(s.orders.some((o) => o.points_earned > Math.floor(o.total))).toBe(true);
    const audit = await t.all(shop.token, 'audit_events');
    expect(audit.filter((a) => a.action === 'shop.demo_data_added')).toMatchObject([
      { actor: { type: 'cli' }, resource: 'shop', changes: { customers: [null, 50], redemptions: [null, seeded.redemptions] } },
    ]);

    // The demo writes through the services, not the API: it leaves no token of its own behind.
    const tokens = JSON.parse(await t.ok('tokens', 'list', '--shop', String(shop.shop.id), '--json')).tokens as { name: string; revoked_at: string | null }[];
    expect(tokens.filter((k) => k.name.startsWith('demo') && k.revoked_at === null)).toEqual([]);
  });

  it('is harmless to run again: nothing is added, nothing credited twice', async () => {
    const before = await snapshot(shop);
    expect(await demo(shop, 50)).toEqual({ customers: 0, orders: 0, earning_rules: 0, rewards: 0, vip_tiers: 0, redemptions: 0, points_events: 0 });
    expect(await t.ok('demo', '--shop', String(shop.shop.id), '--customers', '50')).toMatch(/nothing to add/);
    expect(await snapshot(shop)).toEqual(before);
  });

  it('adds only the new customers, with their orders and points, when run with more', async () => {
    const before = await snapshot(shop);
    const seeded = await demo(shop, 60);
    expect(seeded).toMatchObject({ customers: 10, earning_rules: 0, rewards: 0, vip_tiers: 0 });
    const after = await snapshot(shop);
    expect(after.customers.map((c) => c.remote_id)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(after.customers.slice(0, 50)).toEqual(before.customers);
    expect(after.orders.slice(0, before.orders.length)).toEqual(before.orders);
    expect(after.orders).toHaveLength(before.orders.length + seeded.orders);
    expect(after.orders.slice(before.orders.length).every((o) => o.customer_remote_id > 50)).toBe(true);
    expect(after.events).toHaveLength(before.events.length + seeded.points_events);
    // The rewards are as they were, but for their redemptions_count, up by the new customers' redemptions.
    const counted = (rewards: any[]) => rewards.reduce((sum, r) => sum + r.redemptions_count, 0);
    const withoutCount = (rewards: any[]) => rewards.map(({ redemptions_count: _, ...r }) => r);
    expect(withoutCount(after.rewards)).toEqual(withoutCount(before.rewards));
    expect(counted(after.rewards)).toBe(counted(before.rewards) + seeded.redemptions);
    expect(after.tiers).toEqual(before.tiers);
    expectConsistent(after);
  });

  it("leaves a shop's own tiers alone and adds only the ones that fit", async () => {
    const own = await t.createShop('Has tiers');
    const res = await post(own, 'vip_tiers', { name: 'Platinum', points_threshold: 500 });
    expect(res.statusCode).toBe(201);
    const seeded = await demo(own, 5);
    expect(seeded).toMatchObject({ customers: 5, vip_tiers: 2 });
    const tiers = await t.all(own.token, 'vip_tiers');
    expect(tiers.map((v) => [v.name, v.points_threshold]).sort()).toEqual([
      ['Bronze', 0],
      ['Gold', 1200],
      ['Platinum', 500],
    ]);
    expectConsistent(await snapshot(own));
  });

  it("announces the customers it creates to the shop's customer.created webhooks, as an import would", async () => {
    const own = await t.createShop('Listens');
    const hook = await post(own, 'webhooks', { topic: 'customer.created', url: 'https://hooks.example.com/loyalty' });
    expect(hook.statusCode).toBe(201);
    await demo(own, 3);
    const deliveries = await t.all(own.token, `webhooks/${hook.json().data.id}/deliveries`);
    const customers = await t.all(own.token, 'customers');
    expect(deliveries.map((d) => [d.topic, d.status])).toEqual(customers.map(() => ['customer.created', 'pending']));
    // What each delivery carries is the customer as the API showed it when it was created: with
    // the signup bonus and the tier it reaches, before their orders.
    expect(deliveries.map((d) => d.payload.data.remote_id).sort()).toEqual([1, 2, 3]);
    for (const d of deliveries) {
      const customer = customers.find((c) => c.remote_id === d.payload.data.remote_id);
      expect(d.payload.data).toEqual({
        ...customer,
        // As it was when it joined, before the orders of the days after.
        updated_at: customer.created_at,
        points_balance: 100,
        points_pending: 0,
        points_earned_lifetime: 100,
        points_spent_lifetime: 0,
        next_expiry: null,
        vip_tier: { id: expect.any(Number), name: 'Bronze' },
        vip_tier_progress: {
          metric: 'points_earned',
          value: 100,
          points_earned: 100,
          next_tier: { id: expect.any(Number), name: 'Silver', threshold: 500, points_threshold: 500 },
          needed: 400,
          points_needed: 400,
        },
      });
    }
    // A second run creates nobody, so it announces nothing.
    await demo(own, 3);
    expect(await t.all(own.token, `webhooks/${hook.json().data.id}/deliveries`)).toHaveLength(3);
  });

  it('refuses bad arguments with a clear message, a non-zero exit and nothing written', async () => {
    const count = async () => Number((await sql<{ n: number }>`select count(*) as n from customers`.execute(t.database.db)).rows[0]!.n);
    const before = await count();
    const id = String(shop.shop.id);
    const cases: [string[], RegExp][] = [
      [['demo', '--shop', '999999', '--customers', '5'], /no shop with id 999999/],
      [['demo', '--shop', id, '--customers', '0'], /--customers must be a positive integer, got "0"/],
      [['demo', '--shop', id, '--customers', 'lots'], /--customers must be a positive integer, got "lots"/],
      [['demo', '--customers', '5'], /required option '--shop <id>'/],
    ];
    const results = await Promise.all(cases.map(([args]) => t.run(...args)));
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
    expect(await count()).toBe(before);
  });

  it('leaves a ledger that loyalty verify finds consistent', async () => {
    expect(await verifyLedger(t.database.db, null)).toEqual([]);
  });
});
