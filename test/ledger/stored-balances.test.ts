import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expireLots, sweepExpiredLots } from '../../src/ledger/expiry.js';
import { transaction } from '../../src/db/dialect.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, loyalty, postBatch, postEvent } from './fixtures.js';

// Balances are stored per customer and changed with every event (docs/ledger.md): these tests
// look at what customers show, at lots read a chunk at a time, at lots that expire between
// sweeps, and at the sweep's bounded transactions. Each describe shares one shop and one
// clock across its `it` blocks, in order.

const START = Date.UTC(2026, 0, 15, 12);
const at = (days: number) => new Date(START + days * DAY).toISOString();
const grant = (customer: string, points: number, expires_at?: string, credits?: number) => ({
  customer_identifier: customer,
  source: 'manual',
  points_amount: points,
  ...(credits !== undefined ? { credits_amount: credits } : {}),
  ...(expires_at ? { expires_at } : {}),
});

async function customer(t: TestContext, id: number | string) {
  const res = await t.request('GET', `${API}/customers/${id}`);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

async function consumedLots(t: TestContext, eventId: number): Promise<number[]> {
  const rows = await t.database.db
    .selectFrom('lot_consumptions')
    .innerJoin('points_lots', (j) => j.onRef('points_lots.shop_id', '=', 'lot_consumptions.shop_id').onRef('points_lots.id', '=', 'lot_consumptions.lot_id'))
    .select(['points_lots.event_id'])
    .where('lot_consumptions.shop_id', '=', t.shop.id)
    .where('lot_consumptions.event_id', '=', eventId)
    // FIFO order: the earliest expiry first, never-expiring last, then oldest first.
    .orderBy(sql`coalesce(points_lots.expires_at, 9007199254740991)`)
    .orderBy('points_lots.id')
    .execute();
  return rows.map((r) => Number(r.event_id));
}

describe(`stored balances: what customers show (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null }, now: START });
    await createCustomers(t, 3);
  });
  afterAll(() => t.close());

  it('shows lifetime earned and spent, pending and the next expiry, on the customer and in lists', async () => {
    expect(await customer(t, 1)).toMatchObject({
      points_balance: 0,
      points_pending: 0,
      points_earned_lifetime: 0,
      points_spent_lifetime: 0,
      next_expiry: null,
    });
    const granted = await postBatch(t, [grant('1', 100, at(10)), grant('1', 50, at(10), 2.5), grant('1', 70, at(20)), grant('1', 30)]);
    expect(granted.statusCode).toBe(201);
    expect(await customer(t, 1)).toMatchObject({
      points_balance: 250,
      credits_balance: 2.5,
      points_earned_lifetime: 250,
      points_spent_lifetime: 0,
      next_expiry: { points: 150, credits: 2.5, expires_at: at(10) },
    });
    const spent = await postEvent(t, grant('1', -120));
    expect(spent.statusCode).toBe(201);
    expect(spent.json().data.customer).toMatchObject({ remote_id: 1, points_balance: 130, credits_balance: 2.5 });
    const shown = await customer(t, 'customer1@example.com');
    expect(shown).toMatchObject({
      points_balance: 130,
      points_earned_lifetime: 250,
      points_spent_lifetime: 120,
      next_expiry: { points: 30, credits: 2.5, expires_at: at(10) },
    });
    const page = await t.request('GET', `${API}/customers`, { query: { 'pagination[since_id]': '0' } });
    expect(page.json().data[0]).toEqual(shown);
    const offset = await t.request('GET', `${API}/customers`, { query: { 'pagination[per_page]': '2' } });
    expect(offset.json().data[0]).toEqual(shown);
  });

  it('moves the next expiry on at the instant lots expire, before any sweep', async () => {
    t.clock.advance(10 * DAY);
    const shown = await customer(t, 1);
    expect(shown).toMatchObject({ points_balance: 100, credits_balance: 0, next_expiry: { points: 70, credits: 0, expires_at: at(20) } });
    const page = await t.request('GET', `${API}/customers`, { query: { 'pagination[limit]': '1' } });
    expect(page.json().data).toEqual([shown]);
    // Expiry is neither spending nor a clawback: lifetime totals stay.
    expect(shown).toMatchObject({ points_earned_lifetime: 250, points_spent_lifetime: 120 });
  });

  it('deducts from what has not expired, while expired lots still wait for the sweep', async () => {
    const res = await postEvent(t, grant('1', -80));
    expect(res.statusCode).toBe(201);
    expect(res.json().data.customer.points_balance).toBe(20);
    expect(await consumedLots(t, res.json().data.id)).toHaveLength(2);
    expect(await customer(t, 1)).toMatchObject({ points_balance: 20, points_spent_lifetime: 200, next_expiry: null });
    expect(await sweepExpiredLots(t.database.db, t.clock.now)).toBe(2);
    expect(await customer(t, 1)).toMatchObject({ points_balance: 20, credits_balance: 0, next_expiry: null });
  });

  it('keeps balances past 2^31 exact, in events, customers and lists', async () => {
    const max = 2147483647;
    const res = await postBatch(t, [grant('2', max), grant('2', max)]);
    expect(res.statusCode).toBe(201);
    expect(res.json().data[1].customer.points_balance).toBe(2 * max);
    expect(await customer(t, 2)).toMatchObject({ points_balance: 2 * max, points_earned_lifetime: 2 * max });
    const spend = await postEvent(t, grant('2', -max));
    expect(spend.json().data.customer.points_balance).toBe(max);
    const page = await t.request('GET', `${API}/customers`, { query: { 'pagination[since_id]': '1', 'pagination[limit]': '1' } });
    expect(page.json().data[0]).toMatchObject({ points_balance: max, points_spent_lifetime: max });
  });

  it('reads stored balances up to 2^53 - 1 exactly', async () => {
    const other = await t.createShop();
    await createCustomers(t, 1, 1, other.token);
    await sql`update customers set points_balance = 9007199254740991, points_earned_lifetime = 9007199254740991 where shop_id = ${other.shop.id}`.execute(
      t.database.db,
    );
    const res = await t.request('GET', `${API}/customers/1`, { token: other.token });
    expect(res.body).toContain('"points_balance":9007199254740991');
    expect(res.json().data.points_earned_lifetime).toBe(Number.MAX_SAFE_INTEGER);
    // The other shop's ledger is now wrong on purpose, and verify says so.
    const verify = await loyalty(t.url, 'verify', '--shop', String(other.shop.id));
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain("points_balance = the sum of the customer's events");
    expect(verify.stdout).toContain('customer 1');
    expect(verify.stdout).toContain('9007199254740991');
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t));
});

describe(`stored balances: a deduction reads only the lots it consumes (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null }, now: START });
    await createCustomers(t, 2);
  });
  afterAll(() => t.close());

  it('consumes across many chunks of lots, first-expiring first, never-expiring last, oldest first', async () => {
    // 300 lots: expiring in 300 … 1 days (granted latest-expiring first), then 100 that never expire.
    const expiring = Array.from({ length: 300 }, (_, i) => grant('1', 1, at(300 - i)));
    const never = Array.from({ length: 100 }, () => grant('1', 1));
    expect((await postBatch(t, [...expiring, ...never])).statusCode).toBe(201);
    const events = (await t.request('GET', `${API}/customers/1/points_events`, { query: { 'pagination[limit]': '250' } })).json().data;
    const more = (
      await t.request('GET', `${API}/customers/1/points_events`, { query: { 'pagination[since_id]': String(events[249].id), 'pagination[limit]': '250' } })
    ).json().data;
    const ids: number[] = [...events, ...more].map((e: { id: number }) => e.id);
    expect(ids).toHaveLength(400);

    const first = await postEvent(t, grant('1', -250));
    expect(first.statusCode).toBe(201);
    // The 250 earliest expiries are the last 250 expiring grants, earliest first.
    expect(await consumedLots(t, first.json().data.id)).toEqual(ids.slice(50, 300).reverse());
    const second = await postEvent(t, grant('1', -100));
    expect(await consumedLots(t, second.json().data.id)).toEqual([...ids.slice(0, 50).reverse(), ...ids.slice(300, 350)]);
    expect(second.json().data.customer.points_balance).toBe(50);
    expect(await customer(t, 1)).toMatchObject({ points_balance: 50, next_expiry: null });
  });

  it("merges a batch's own grants into the order of stored lots", async () => {
    const res = await postBatch(t, [grant('2', 5, at(400)), grant('2', 5, at(2)), grant('2', -7), grant('2', 5, at(1)), grant('2', -6)]);
    expect(res.statusCode).toBe(201);
    const data = res.json().data;
    expect(await consumedLots(t, data[2].id)).toEqual([data[1].id, data[0].id]);
    expect(await consumedLots(t, data[4].id)).toEqual([data[3].id, data[0].id]);
    expect(await customer(t, 2)).toMatchObject({ points_balance: 2, next_expiry: { points: 2, credits: 0, expires_at: at(400) } });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t));
});

describe(`stored balances: the sweep works in bounded transactions (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null }, now: START });
    await createCustomers(t, 3);
  });
  afterAll(() => t.close());

  it('writes off at most its budget of lots per transaction, and all of them in the end', async () => {
    const lots = (customer: string, n: number) =>
      Array.from({ length: n }, (_, i) => grant(customer, 1 + (i % 3), at(1 + (i % 5)), i % 4 === 0 ? 0.5 : undefined));
    expect((await postBatch(t, [...lots('1', 250), ...lots('2', 40), grant('3', 9, at(2)), grant('3', 1)])).statusCode).toBe(201);
    t.clock.advance(10 * DAY);
    const before = await customer(t, 1);
    expect(before).toMatchObject({ points_balance: 0, credits_balance: 0, next_expiry: null });

    const once = await transaction(t.database.db, (trx) => expireLots(trx, t.shop.id, [1, 2, 3], t.clock.now, 60));
    expect(once).toBe(60);
    // The balances shown were exact before; the sweep's write moves updated_at (docs/pagination.md).
    expect(await customer(t, 1)).toEqual({ ...before, updated_at: new Date(t.clock.now).toISOString() });
    const rest = await sweepExpiredLots(t.database.db, t.clock.now, 50);
    // Every lot with something left: 250 + 40 points lots, their credits lots, and customer 3's expiring one.
    const credits = (n: number) => Math.ceil(n / 4);
    expect(once + rest).toBe(250 + credits(250) + 40 + credits(40) + 1);
    expect(await sweepExpiredLots(t.database.db, t.clock.now)).toBe(0);
    expect(await customer(t, 3)).toMatchObject({ points_balance: 1, next_expiry: null });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t));
});
