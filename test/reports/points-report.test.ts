import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releasePendingPoints } from '../../src/earning/jobs.js';
import { sweepExpiredLots } from '../../src/ledger/expiry.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch, postEvent } from '../ledger/fixtures.js';
import { columnSums, expectReconciled, FLOW_KINDS, pointsReport } from './fixtures.js';

// GET /reports/points: every kind of ledger event in its column, every period reconciling,
// and weeks and months adding up to the days (docs/reports.md).

const START = Date.UTC(2026, 2, 2, 12);
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe(`every kind of event lands in its column (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: START, shop: { per_event_expiry: true } });
    await createCustomers(t, 2);
    const rule = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1, currency: 'EUR' } });
    expect(rule.statusCode, rule.body).toBe(201);
  });
  afterAll(() => t?.close());

  const post = async (body: Record<string, unknown>) => {
    const res = await postEvent(t, { customer_identifier: '1', source: 'manual', ...body });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number };
  };
  const ok = async (res: Promise<{ statusCode: number; body: string; json(): any }>, status: number | number[] = 200) => {
    const answer = await res;
    expect([status].flat(), answer.body).toContain(answer.statusCode);
    return answer.json().data;
  };
  const putOrder = (id: number, fields: Record<string, unknown>) =>
    t.request('PUT', `${API}/orders/${id}`, {
      body: { customer_remote_id: 1, total: 100, currency: 'EUR', placed_at: new Date(t.clock.now).toISOString(), ...fields },
    });
  /** The one day of the report that is today, after checking every period. */
  const today = async () => {
    const periods = await pointsReport(t, date(START), date(t.clock.now));
    expectReconciled(periods);
    expect(periods[0]).toMatchObject({ points_outstanding_start: 0, credits_outstanding_start: 0 });
    return periods.at(-1)!;
  };

  it('grants, deductions, redemptions, voids, reversals, expirations, pending releases and clawbacks', async () => {
    await post({ points_amount: 1000, credits_amount: 2.5 });
    await post({ points_amount: -100, credits_amount: -1 });
    expect(await today()).toMatchObject({
      points_earned: 1000,
      points_deducted: 100,
      credits_earned: 2.5,
      credits_deducted: 1,
      points_outstanding_end: 900,
      credits_outstanding_end: 1.5,
    });

    t.clock.advance(DAY);
    const reward = await ok(
      t.request('POST', `${API}/rewards`, { body: { name: '5 € off', kind: 'fixed_amount_discount', value: 5, points_price: 300 } }),
      201,
    );
    const redemption = await ok(t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '1' } }), 201);
    expect(await today()).toMatchObject({ points_redeemed: 300, points_reversed: 0, points_outstanding_start: 900, points_outstanding_end: 600 });
    await ok(t.request('POST', `${API}/redemptions/${redemption.id}/void`));
    // A void gives back: reversed is negative.
    expect(await today()).toMatchObject({ points_redeemed: 300, points_reversed: -300, points_outstanding_end: 900 });

    t.clock.advance(DAY);
    const grant = await post({ points_amount: 70 });
    await ok(t.request('POST', `${API}/points_events/${grant.id}/reverse`), 201);
    await post({ points_amount: 50, expires_at: new Date(t.clock.now + DAY / 2).toISOString() });
    expect(await today()).toMatchObject({ points_earned: 120, points_reversed: 70, points_outstanding_end: 950 });

    // The expiration is applied when the lot expired: on that day, whenever the sweep runs.
    t.clock.advance(2 * DAY);
    expect(await sweepExpiredLots(t.database.db, t.clock.now)).toBe(1);
    const periods = await pointsReport(t, date(START), date(t.clock.now));
    expect(periods.map((p) => p.points_expired)).toEqual([0, 0, 0, 50, 0]);
    expect(periods.at(-1)).toMatchObject({ points_outstanding_end: 900 });

    await ok(putOrder(1, { financial_status: 'paid' }), [200, 201]);
    await ok(putOrder(1, { financial_status: 'partially_refunded', total_refunded: 40 }));
    expect(await today()).toMatchObject({ points_earned: 100, points_clawed_back: 40, points_outstanding_end: 960, points_pending_end: 0 });

    // Pending points are not outstanding; they are earned when released.
    await ok(t.request('PATCH', `${API}/shop`, { body: { points_pending_days: 14 } }));
    t.clock.advance(DAY);
    await ok(putOrder(2, { financial_status: 'paid', total: 60 }), [200, 201]);
    expect(await today()).toMatchObject({ points_earned: 0, points_pending_end: 60, points_outstanding_end: 960 });
    t.clock.advance(15 * DAY);
    expect(await releasePendingPoints(t.database.db, t.clock.now)).toBe(1);
    expect(await today()).toMatchObject({ points_earned: 60, points_pending_end: 0, points_outstanding_start: 960, points_outstanding_end: 1020 });

    const all = columnSums(await pointsReport(t, date(START), date(t.clock.now)));
    expect(all).toEqual({
      points_earned: 1280,
      points_redeemed: 300,
      points_deducted: 100,
      points_expired: 50,
      points_reversed: -230,
      points_clawed_back: 40,
      credits_earned: 2.5,
      credits_redeemed: 0,
      credits_deducted: 1,
      credits_expired: 0,
      credits_reversed: 0,
      credits_clawed_back: 0,
    });
    expect((await t.request('GET', `${API}/customers/1`)).json().data).toMatchObject({ points_balance: 1020, credits_balance: 1.5 });
    await expectConsistentLedger(t);
  });

  it('refuses a bad range, naming the parameter', async () => {
    const bad = async (query: Record<string, string>, param: string) => {
      const res = await t.request('GET', `${API}/reports/points`, { query });
      expect(res.statusCode, res.body).toBe(400);
      expect(errorOf(res)).toMatchObject({ code: 'invalid_parameter' });
      expect(errorOf(res).details?.map((d) => d.param)).toContain(param);
    };
    await bad({ from: '2026-02-30', to: '2026-03-01' }, 'from');
    await bad({ from: '2026-03-01' }, 'to');
    await bad({ from: '2026-03-02', to: '2026-03-01' }, 'to');
    await bad({ from: '2025-01-01', to: '2026-01-02' }, 'to');
    await bad({ from: '2020-01-01', to: '2030-01-31', interval: 'month' }, 'to');
    await bad({ from: '2026-01-01', to: '2026-01-02', interval: 'year' }, 'interval');
    expect(await pointsReport(t, '2025-01-01', '2025-12-31')).toHaveLength(365);
    expect(await pointsReport(t, '2017-01-01', '2026-12-31', 'month')).toHaveLength(120);
  });
});

describe(`a randomised history reconciles in every period (${TEST_DIALECT})`, () => {
  const NOW = Date.UTC(2026, 5, 1, 12);
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: NOW, shop: { per_event_expiry: true } });
    await createCustomers(t, 20);
    // Asia/Kolkata: local days are UTC + 05:30, all year.
    expect((await t.request('PATCH', `${API}/shop`, { body: { timezone: 'Asia/Kolkata' } })).statusCode).toBe(200);
  });
  afterAll(() => t?.close());

  it('holds the identity for every day, week and month, and weeks and months total what the days do', async () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const localDate = (ms: number) => date(ms + 5.5 * 3600_000);
    const earnedByDay = new Map<string, number>();
    const deductedByDay = new Map<string, number>();
    const add = (map: Map<string, number>, at: number, n: number) => map.set(localDate(at), (map.get(localDate(at)) ?? 0) + n);
    const at = () => NOW - Math.floor(random() * 300 * DAY);
    for (let batch = 0; batch < 5; batch++) {
      const events = Array.from({ length: 500 }, (_, i) => {
        const appliedAt = at();
        const points = 10 + Math.floor(random() * 90);
        add(earnedByDay, appliedAt, points);
        const expiring = i % 3 === 0 ? { expires_at: new Date(appliedAt + 10 * DAY).toISOString() } : {};
        return {
          customer_identifier: String((i % 20) + 1),
          source: 'order',
          points_amount: points,
          credits_amount: (i % 7) / 4,
          applied_at: new Date(appliedAt).toISOString(),
          ...expiring,
        };
      });
      expect((await postBatch(t, events)).statusCode).toBe(201);
    }
    const deductions = Array.from({ length: 1000 }, (_, i) => {
      const appliedAt = at();
      const points = 1 + Math.floor(random() * 5);
      add(deductedByDay, appliedAt, points);
      return { customer_identifier: String((i % 20) + 1), source: 'manual', points_amount: -points, applied_at: new Date(appliedAt).toISOString() };
    });
    expect((await postBatch(t, deductions)).statusCode).toBe(201);
    expect(await sweepExpiredLots(t.database.db, NOW)).toBeGreaterThan(500);

    const from = localDate(NOW - 300 * DAY);
    const to = localDate(NOW);
    const days = await pointsReport(t, from, to);
    expect(days).toHaveLength(301);
    expectReconciled(days);
    expect(days[0]).toMatchObject({ points_outstanding_start: 0, credits_outstanding_start: 0 });
    for (const day of days) {
      expect([day.period_start, day.points_earned, day.points_deducted]).toEqual([
        day.period_start,
        earnedByDay.get(day.period_start) ?? 0,
        deductedByDay.get(day.period_start) ?? 0,
      ]);
    }
    const { rows } = await sql<{
      points: number;
      credits: number;
    }>`select sum(points_balance) as points, sum(credits_balance) as credits from customers where shop_id = ${t.shop.id}`.execute(t.database.db);
    expect(days.at(-1)).toMatchObject({ points_outstanding_end: Number(rows[0]!.points), credits_outstanding_end: Number(rows[0]!.credits) / 100 });

    for (const interval of ['week', 'month']) {
      const periods = await pointsReport(t, from, to, interval);
      expectReconciled(periods);
      expect(columnSums(periods)).toEqual(columnSums(days));
      expect(periods[0]!.period_start).toBe(from);
      expect(periods.at(-1)).toMatchObject({
        period_end: to,
        points_outstanding_end: days.at(-1)!.points_outstanding_end,
        credits_outstanding_end: days.at(-1)!.credits_outstanding_end,
      });
    }
    expect(FLOW_KINDS.every((k) => typeof days[0]![`points_${k}`] === 'number')).toBe(true);
    await expectConsistentLedger(t);
  });
});
