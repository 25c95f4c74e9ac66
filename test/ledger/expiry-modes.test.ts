import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/jobs.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, createCustomers, expectConsistentLedger, postEvent } from './fixtures.js';

// Inactivity expiry (docs/ledger.md, "Expiry modes"): a customer's whole balance expires a
// period after their last grant, deduction or redemption, and never before a full period after
// the mode was switched on. The clock is the test's; the job runs when a test says.

const PERIOD = 30 * DAY;

async function runJob(t: TestContext, name: string): Promise<number> {
  return (await jobs.find((j) => j.name === name)!.run(t.app)) as number;
}

const grant = (customer: number, points: number) => ({ customer_identifier: String(customer), source: 'manual', points_amount: points });

async function expirations(t: TestContext, customer: number): Promise<{ points_amount: number; applied_at: string }[]> {
  const res = await t.request('GET', `${API}/customers/${customer}/points_events`, { query: { 'pagination[limit]': '250' } });
  return res
    .json()
    .data.filter((e: { source: string }) => e.source === 'expiration')
    .map((e: { points_amount: number; applied_at: string }) => ({ points_amount: e.points_amount, applied_at: e.applied_at }));
}

describe(`expiry modes: inactivity (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  let switchedAt: number;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 8);
  });
  afterAll(() => t.close());

  it('refuses settings that do not fit together, in the documented shape', async () => {
    const missing = await t.request('PATCH', `${API}/shop`, { body: { points_expiry_mode: 'inactivity' } });
    expect(missing.statusCode).toBe(422);
    expect(errorOf(missing).details).toEqual([expect.objectContaining({ param: 'points_inactivity_days', code: 'required_for_inactivity' })]);
    const bad = await t.request('PATCH', `${API}/shop`, {
      body: { points_expiry_mode: 'inactivity', points_inactivity_days: 30, expiry_reminder_days: [7, 30, 7] },
    });
    expect(bad.statusCode).toBe(422);
    expect(errorOf(bad).details!.map((d) => [d.param, d.code])).toEqual([
      ['expiry_reminder_days', 'duplicate_value'],
      ['expiry_reminder_days[1]', 'reminder_not_before_expiry'],
    ]);
    const many = await t.request('PATCH', `${API}/shop`, { body: { expiry_reminder_days: [1, 2, 3, 4] } });
    expect(many.statusCode).toBe(422);
    expect(errorOf(many).code).toBe('validation_failed');
    const mode = await t.request('PATCH', `${API}/shop`, { body: { points_expiry_mode: 'sometimes' } });
    expect(mode.statusCode).toBe(422);
    const shop = (await t.request('GET', `${API}/shop`)).json().data;
    expect(shop).toMatchObject({ points_expiry_mode: 'per_lot', points_inactivity_days: null, points_inactivity_since: null, expiry_reminder_days: [] });
  });

  it('expires nothing before a full period after the switch, then the whole balance at that instant', async () => {
    expect((await postEvent(t, grant(1, 100))).statusCode).toBe(201);
    t.clock.advance(90 * DAY);
    // Long inactive already: nothing happens while the shop is per_lot.
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    switchedAt = t.clock.now;
    const res = await t.request('PATCH', `${API}/shop`, { body: { points_expiry_mode: 'inactivity', points_inactivity_days: 30 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      points_expiry_mode: 'inactivity',
      points_inactivity_days: 30,
      points_inactivity_since: new Date(switchedAt).toISOString(),
    });
    t.clock.now = switchedAt + PERIOD - 1;
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    expect((await balanceOf(t, 1)).points).toBe(100);
    t.clock.now = switchedAt + PERIOD;
    expect(await runJob(t, 'expire-inactive-balances')).toBe(1);
    expect((await balanceOf(t, 1)).points).toBe(0);
    expect(await expirations(t, 1)).toEqual([{ points_amount: -100, applied_at: new Date(switchedAt + PERIOD).toISOString() }]);
    // Written off once: the customer left the index.
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    await expectConsistentLedger(t);
  });

  it('expires at exactly N days after the last activity, not a millisecond before', async () => {
    const start = t.clock.now;
    expect((await postEvent(t, { ...grant(2, 40), credits_amount: 2.5 })).statusCode).toBe(201);
    t.clock.now = start + PERIOD - 1;
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    expect(await balanceOf(t, 2)).toEqual({ points: 40, credits: 2.5 });
    t.clock.now = start + PERIOD;
    // Nothing is available from that instant on, before the sweep writes it off.
    expect(await balanceOf(t, 2)).toEqual({ points: 0, credits: 0 });
    expect(await runJob(t, 'expire-inactive-balances')).toBe(2);
    expect(await balanceOf(t, 2)).toEqual({ points: 0, credits: 0 });
    await expectConsistentLedger(t);
  });

  it('restarts the clock on a grant, a deduction or a redemption', async () => {
    const reward = await t.request('POST', `${API}/rewards`, { body: { name: '5 off', kind: 'fixed_amount_discount', value: 5, points_price: 10 } });
    expect(reward.statusCode, reward.body).toBe(201);
    const start = t.clock.now;
    for (const c of [3, 4, 5, 6]) expect((await postEvent(t, grant(c, 100))).statusCode).toBe(201);
    t.clock.now = start + 20 * DAY;
    expect((await postEvent(t, grant(3, 5))).statusCode).toBe(201);
    expect((await postEvent(t, grant(4, -5))).statusCode).toBe(201);
    const redeemed = await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.json().data.id, customer_identifier: '5' } });
    expect(redeemed.statusCode, redeemed.body).toBe(201);
    t.clock.now = start + PERIOD;
    // Only the customer without activity since.
    expect(await runJob(t, 'expire-inactive-balances')).toBe(1);
    expect((await balanceOf(t, 6)).points).toBe(0);
    expect([(await balanceOf(t, 3)).points, (await balanceOf(t, 4)).points, (await balanceOf(t, 5)).points]).toEqual([105, 95, 90]);
    t.clock.now = start + 20 * DAY + PERIOD - 1;
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    t.clock.now = start + 20 * DAY + PERIOD;
    // One event per lot: customer 3 holds two.
    expect(await runJob(t, 'expire-inactive-balances')).toBe(4);
    for (const c of [3, 4, 5]) expect((await balanceOf(t, c)).points).toBe(0);
    await expectConsistentLedger(t);
  });

  it('writes a due balance off before a posting the sweep has not reached, so the posting neither spends nor revives it', async () => {
    const start = t.clock.now;
    expect((await postEvent(t, grant(7, 100))).statusCode).toBe(201);
    t.clock.now = start + PERIOD + DAY;
    const spend = await postEvent(t, grant(7, -1));
    expect(spend.statusCode).toBe(422);
    expect(errorOf(spend).details![0]!.code).toBe('insufficient_balance');
    const res = await postEvent(t, grant(7, 5));
    expect(res.statusCode).toBe(201);
    expect(res.json().data.customer.points_balance).toBe(5);
    expect(await expirations(t, 7)).toEqual([{ points_amount: -100, applied_at: new Date(start + PERIOD).toISOString() }]);
    await expectConsistentLedger(t);
  });

  it('starts a new grace when the period changes, and leaves per_lot shops alone', async () => {
    const start = t.clock.now;
    expect((await postEvent(t, grant(8, 100))).statusCode).toBe(201);
    t.clock.now = start + 20 * DAY;
    expect((await t.request('PATCH', `${API}/shop`, { body: { points_inactivity_days: 10 } })).statusCode).toBe(200);
    t.clock.now = start + 30 * DAY - 1;
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    t.clock.now = start + 30 * DAY;
    // Customers 7 and 8, both last active at start.
    expect(await runJob(t, 'expire-inactive-balances')).toBe(2);
    expect((await balanceOf(t, 8)).points).toBe(0);

    const other = await t.createShop({ points_expiry_days: 10 });
    const put = await t.request('PUT', `${API}/customers/1`, { token: other.token, body: { email: 'other@example.com' } });
    expect(put.statusCode).toBe(201);
    expect((await t.request('POST', `${API}/points_events`, { token: other.token, body: grant(1, 50) })).statusCode).toBe(201);
    t.clock.advance(400 * DAY);
    expect(await runJob(t, 'expire-inactive-balances')).toBe(0);
    expect(await runJob(t, 'expire-lots')).toBe(1);
    expect((await balanceOf(t, 1, other.token)).points).toBe(0);
    await expectConsistentLedger(t, null);
  });
  it('keeps, outside inactivity mode, the activity a customer has (the switch starts a full period whatever it was), and restarts it in that mode', async () => {
    const shop = await t.createShop();
    const as = { token: shop.token };
    expect((await t.request('PUT', `${API}/customers/1`, { ...as, body: { email: 'late@example.com' } })).statusCode).toBe(201);
    const stored = async () =>
      Number(
        (
          await t.database.db
            .selectFrom('customers')
            .select('points_active_at')
            .where('shop_id', '=', shop.shop.id)
            .where('remote_id', '=', 1)
            .executeTakeFirstOrThrow()
        ).points_active_at,
      );
    const first = t.clock.now;
    expect((await t.request('POST', `${API}/points_events`, { ...as, body: grant(1, 50) })).statusCode).toBe(201);
    t.clock.advance(5 * DAY);
    expect((await t.request('POST', `${API}/points_events/batch`, { ...as, body: { points_events: [grant(1, 50)] } })).statusCode).toBe(201);
    // A per_lot shop's posting leaves the stored activity (and its index) as it was.
    expect(await stored()).toBe(first);
    t.clock.advance(DAY);
    const switched = t.clock.now;
    expect((await t.request('PATCH', `${API}/shop`, { ...as, body: { points_expiry_mode: 'inactivity', points_inactivity_days: 30 } })).statusCode).toBe(200);
    t.clock.now = switched + PERIOD - 1;
    expect((await balanceOf(t, 1, shop.token)).points).toBe(100);
    const restarted = t.clock.now;
    expect((await t.request('POST', `${API}/points_events`, { ...as, body: grant(1, 10) })).statusCode).toBe(201);
    expect(await stored()).toBe(restarted);
    t.clock.now = restarted + PERIOD - 1;
    expect((await balanceOf(t, 1, shop.token)).points).toBe(110);
    t.clock.now = restarted + PERIOD;
    expect((await balanceOf(t, 1, shop.token)).points).toBe(0);
    await expectConsistentLedger(t, null);
  });
});
