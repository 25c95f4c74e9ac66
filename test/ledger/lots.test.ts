import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/jobs.js';
import { DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, createCustomers, postBatch, postEvent, expectConsistentLedger } from './fixtures.js';

const at = (days: number) => new Date(Date.UTC(2026, 0, 15, 12) + days * DAY).toISOString();

async function sweep(t: TestContext): Promise<number> {
  const job = jobs.find((j) => j.name === 'expire-lots')!;
  expect(job.intervalMs(t.app)).toBe(t.config.expirySweepIntervalMs);
  return (await job.run(t.app)) as number;
}

async function lotsOf(t: TestContext, remoteId: number) {
  const rows = await t.database.db
    .selectFrom('points_lots')
    .select(['id', 'event_id', 'kind', 'amount', 'remaining', 'expires_at'])
    .where('shop_id', '=', t.shop.id)
    .where('customer_remote_id', '=', remoteId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), eventId: Number(r.event_id), kind: r.kind, amount: Number(r.amount), remaining: Number(r.remaining) }));
}

async function consumptionsOf(t: TestContext, eventId: number) {
  const rows = await t.database.db
    .selectFrom('lot_consumptions')
    .select(['lot_id', 'amount'])
    .where('shop_id', '=', t.shop.id)
    .where('event_id', '=', eventId)
    .orderBy('lot_id')
    .execute();
  return rows.map((r) => ({ lotId: Number(r.lot_id), amount: Number(r.amount) }));
}

describe(`lots: first-expiring first, and expiry (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null } });
    await createCustomers(t, 4);
  });
  afterAll(() => t.close());

  const grant = (customer: string, points: number, expires_at?: string) => ({
    customer_identifier: customer,
    source: 'manual',
    points_amount: points,
    ...(expires_at ? { expires_at } : {}),
  });

  it('consumes lots first-expiring first, never-expiring last, oldest first among equals, and records them', async () => {
    const granted = await postBatch(t, [grant('1', 10, at(30)), grant('1', 10, at(10)), grant('1', 10), grant('1', 10, at(10))]);
    expect(granted.statusCode).toBe(201);
    const [a, b, c, d] = await lotsOf(t, 1);
    const deduction = await postEvent(t, grant('1', -25));
    expect(deduction.statusCode).toBe(201);
    expect(deduction.json().data.customer.points_balance).toBe(15);
    expect(await consumptionsOf(t, deduction.json().data.id)).toEqual([
      { lotId: a!.id, amount: 5 },
      { lotId: b!.id, amount: 10 },
      { lotId: d!.id, amount: 10 },
    ]);
    expect((await lotsOf(t, 1)).map((l) => l.remaining)).toEqual([5, 0, 10, 0]);
    expect(c!.remaining).toBe(10);
  });

  it('leaves expired lots out of the balance at once, whatever the sweep has done', async () => {
    t.clock.advance(30 * DAY - 1);
    expect(await balanceOf(t, 1)).toEqual({ points: 15, credits: 0 });
    t.clock.advance(1);
    expect(await balanceOf(t, 1)).toEqual({ points: 10, credits: 0 });
    const res = await postEvent(t, grant('1', -11));
    expect(errorOf(res).details).toEqual([expect.objectContaining({ param: 'points_amount', code: 'insufficient_balance' })]);
  });

  it('sweeps: one expiration event per lot that expired with something left', async () => {
    expect(await sweep(t)).toBe(1);
    const lots = await lotsOf(t, 1);
    expect(lots.map((l) => l.remaining)).toEqual([0, 0, 10, 0]);
    const list = await t.database.db.selectFrom('points_events').selectAll().where('shop_id', '=', t.shop.id).where('source', '=', 'expiration').execute();
    expect(list).toHaveLength(1);
    const expiration = list[0]!;
    expect(Number(expiration.points_amount)).toBe(-5);
    expect(Number(expiration.applied_at)).toBe(Date.parse(at(30)));
    expect(Number(expiration.points_balance)).toBe(10);
    expect(await consumptionsOf(t, Number(expiration.id))).toEqual([{ lotId: lots[0]!.id, amount: 5 }]);
    // A second run finds nothing left to expire.
    expect(await sweep(t)).toBe(0);
  });

  it('explains every change: the ledger sums to the balance once swept', async () => {
    const rows = await t.database.db
      .selectFrom('points_events')
      .select(['points_amount'])
      .where('shop_id', '=', t.shop.id)
      .where('customer_remote_id', '=', 1)
      .execute();
    expect(rows.reduce((sum, r) => sum + Number(r.points_amount), 0)).toBe((await balanceOf(t, 1)).points);
  });

  it('expires credits too, and lots that arrive already expired', async () => {
    const res = await postBatch(t, [
      { customer_identifier: '2', source: 'import', credits_amount: 3.5, applied_at: '2025-01-01T00:00:00Z', expires_at: '2025-02-01T00:00:00Z' },
      { customer_identifier: '2', source: 'manual', credits_amount: 1.25, expires_at: at(40) },
    ]);
    expect(res.statusCode).toBe(201);
    expect(res.json().data.map((e: any) => e.customer.credits_balance)).toEqual([0, 1.25]);
    expect(await sweep(t)).toBe(1);
    t.clock.advance(10 * DAY);
    expect(await balanceOf(t, 2)).toEqual({ points: 0, credits: 0 });
    expect(await sweep(t)).toBe(1);
    const amounts = await t.database.db
      .selectFrom('points_events')
      .select(['credits_amount', 'credits_balance'])
      .where('shop_id', '=', t.shop.id)
      .where('customer_remote_id', '=', 2)
      .where('source', '=', 'expiration')
      .orderBy('id')
      .execute();
    expect(amounts.map((r) => [Number(r.credits_amount), Number(r.credits_balance)])).toEqual([
      [-350, 125],
      [-125, 0],
    ]);
  });

  it('does not let a batch spend a grant that arrives already expired', async () => {
    const res = await postBatch(t, [
      { customer_identifier: '3', source: 'import', points_amount: 50, applied_at: '2025-01-01T00:00:00Z', expires_at: '2025-02-01T00:00:00Z' },
      grant('3', -1),
    ]);
    expect(errorOf(res).details).toEqual([expect.objectContaining({ param: 'points_events[1].points_amount', code: 'insufficient_balance' })]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`lots: sweeps racing sweeps and deductions (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { points_expiry_days: 1 } });
    await createCustomers(t, 20);
  });
  afterAll(() => t.close());

  it('writes each expiration once and never lets a lot be both spent and expired', async () => {
    const customers = Array.from({ length: 20 }, (_, i) => String(i + 1));
    await postBatch(
      t,
      customers.map((c) => ({ customer_identifier: c, source: 'manual', points_amount: 10 })),
    );
    t.clock.advance(DAY / 2);
    await postBatch(
      t,
      customers.map((c) => ({ customer_identifier: c, source: 'manual', points_amount: 5 })),
    );
    t.clock.advance(DAY / 2);
    // The first grants have expired; the second ones (5 each) are all that can be spent.
    const [a, b, spends] = await Promise.all([
      sweep(t),
      sweep(t),
      Promise.all(customers.map((c) => postEvent(t, { customer_identifier: c, source: 'manual', points_amount: -5 }))),
    ]);
    expect(spends.map((r) => r.statusCode)).toEqual(customers.map(() => 201));
    expect(a + b + (await sweep(t))).toBe(20);
    for (const c of customers) {
      const rows = await t.database.db
        .selectFrom('points_events')
        .select(['points_amount'])
        .where('shop_id', '=', t.shop.id)
        .where('customer_remote_id', '=', Number(c))
        .execute();
      expect(rows.map((r) => Number(r.points_amount)).sort((x, y) => x - y)).toEqual([-10, -5, 5, 10]);
      expect((await balanceOf(t, c)).points).toBe(0);
    }
  });

  it('sweeps a backlog larger than one chunk', async () => {
    const grants = (n: number) => Array.from({ length: n }, (_, i) => ({ customer_identifier: String((i % 3) + 1), source: 'manual', points_amount: 1 }));
    await postBatch(t, grants(1000));
    await postBatch(t, grants(700));
    t.clock.advance(DAY);
    expect(await sweep(t)).toBe(1700);
    expect(await sweep(t)).toBe(0);
    for (const c of [1, 2, 3]) expect((await balanceOf(t, c)).points).toBe(0);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`lots: the shop's default expiry, with an injected clock (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { points_expiry_days: 30 } });
    await createCustomers(t, 1);
  });
  afterAll(() => t.close());

  it('expires grants points_expiry_days after applied_at', async () => {
    await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 10 });
    t.clock.advance(10 * DAY);
    await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 20 });
    // Spends the older lot first: it expires first.
    const spend = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: -15 });
    expect(spend.json().data.customer.points_balance).toBe(15);
    t.clock.advance(20 * DAY);
    expect((await balanceOf(t, 1)).points).toBe(15);
    t.clock.advance(10 * DAY);
    expect((await balanceOf(t, 1)).points).toBe(0);
    expect(await sweep(t)).toBe(1);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`credits are exact (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 1);
  });
  afterAll(() => t.close());

  it('adds 10,000 events of 0.01 up to exactly 100.00', async () => {
    const events = Array.from({ length: 1000 }, () => ({ customer_identifier: '1', source: 'manual', credits_amount: 0.01 }));
    let last: any;
    for (let i = 0; i < 10; i++) {
      const res = await postBatch(t, events);
      expect(res.statusCode).toBe(201);
      last = res.json().data.at(-1);
    }
    expect(last.customer.credits_balance).toBe(100);
    expect((await balanceOf(t, 1)).credits).toBe(100);
    // And spending it all leaves exactly nothing.
    const spent = await postEvent(t, { customer_identifier: '1', source: 'manual', credits_amount: -99.99 });
    expect(spent.json().data.customer.credits_balance).toBe(0.01);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
