import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredLots } from '../../src/ledger/expiry.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch, postEvent } from './fixtures.js';

// POST /points_events/{id}/reverse undoes one event exactly (docs/ledger.md, "Reversals").
// The `it` blocks share one shop and one clock, in order.

const START = Date.UTC(2026, 0, 15, 12);
const at = (days: number) => new Date(START + days * DAY).toISOString();

describe(`reversals (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null }, now: START });
    await createCustomers(t, 4);
  });
  afterAll(() => t.close());

  const reverse = (id: number, body?: unknown, headers?: Record<string, string>) =>
    t.request('POST', `${API}/points_events/${id}/reverse`, { ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const event = async (id: number) => (await t.request('GET', `${API}/points_events/${id}`)).json().data;

  it('gives a deduction back to the very lots it took, which then expire on their own dates', async () => {
    const grants = (
      await postBatch(t, [
        { customer_identifier: '1', source: 'manual', points_amount: 100, expires_at: at(10) },
        { customer_identifier: '1', source: 'manual', points_amount: 100, expires_at: at(300) },
      ])
    ).json().data;
    const spent = (await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: -150 })).json().data;
    expect(await customer(1)).toMatchObject({ points_balance: 50, points_spent_lifetime: 150 });

    const res = await reverse(spent.id, { external_note: 'Refunded at the till' });
    expect(res.statusCode).toBe(201);
    const reversal = res.json().data;
    expect(reversal).toMatchObject({
      source: 'reversal',
      points_amount: 150,
      reverses_event_id: spent.id,
      external_note: 'Refunded at the till',
      internal_note: `Reverses points event ${spent.id}`,
    });
    expect(reversal.customer.points_balance).toBe(200);
    expect(await event(spent.id)).toMatchObject({ reversed_by_event_id: reversal.id, reverses_event_id: null });
    expect(await customer(1)).toMatchObject({
      points_balance: 200,
      points_spent_lifetime: 0,
      points_earned_lifetime: 200,
      next_expiry: { points: 100, expires_at: at(10) },
    });

    // The 10-day lot has all its points again, and they expire on day 10, not later.
    t.clock.advance(10 * DAY);
    expect(await customer(1)).toMatchObject({ points_balance: 100, next_expiry: { points: 100, expires_at: at(300) } });
    expect(await sweepExpiredLots(t.database.db, t.clock.now)).toBe(1);
    const expired = (await t.request('GET', `${API}/customers/1/points_events`, { query: { 'pagination[limit]': '10' } })).json().data.at(-1);
    expect(expired).toMatchObject({ source: 'expiration', points_amount: -100, applied_at: at(10) });
    expect(grants).toHaveLength(2);
  });

  it('takes a grant back from its own lot first, then first-expiring first, and never below zero', async () => {
    const [older, grant] = (
      await postBatch(t, [
        { customer_identifier: '2', source: 'manual', points_amount: 40, expires_at: at(50) },
        { customer_identifier: '2', source: 'manual', points_amount: 60, credits_amount: 5, expires_at: at(400) },
      ])
    ).json().data;
    // FIFO spends the older 40, then 30 of the grant's own 60.
    expect((await postEvent(t, { customer_identifier: '2', source: 'manual', points_amount: -70 })).statusCode).toBe(201);
    expect(await customer(2)).toMatchObject({ points_balance: 30, credits_balance: 5 });
    const refused = await reverse(grant.id);
    expect(refused.statusCode).toBe(422);
    expect(errorOf(refused)).toMatchObject({ code: 'insufficient_balance', details: [{ param: 'points_amount', code: 'insufficient_balance' }] });

    expect((await postEvent(t, { customer_identifier: '2', source: 'manual', points_amount: 45, expires_at: at(100) })).statusCode).toBe(201);
    const res = await reverse(grant.id);
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ points_amount: -60, credits_amount: -5, customer: { points_balance: 15, credits_balance: 0 } });
    // Its own lot's 30, then 30 of the next to expire (the 45 expiring on day 100).
    expect(await customer(2)).toMatchObject({
      points_balance: 15,
      points_earned_lifetime: 85,
      points_spent_lifetime: 70,
      next_expiry: { points: 15, expires_at: at(100) },
    });
    expect(older.id).toBeLessThan(grant.id);
  });

  it('reverses an event at most once, and never an expiration or a reversal', async () => {
    const grant = (await postEvent(t, { customer_identifier: '3', source: 'signup', points_amount: 10 })).json().data;
    const first = await reverse(grant.id, undefined, { 'idempotency-key': 'reverse-once' });
    expect(first.statusCode).toBe(201);
    const replay = await reverse(grant.id, undefined, { 'idempotency-key': 'reverse-once' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    const again = await reverse(grant.id);
    expect(again.statusCode).toBe(409);
    expect(errorOf(again)).toMatchObject({
      code: 'already_reversed',
      message: `Points event ${grant.id} was already reversed by points event ${first.json().data.id}`,
    });
    const ofReversal = await reverse(first.json().data.id);
    expect(ofReversal.statusCode).toBe(422);
    expect(errorOf(ofReversal).code).toBe('not_reversible');

    const expiration = (await t.request('GET', `${API}/points_events`, { query: { source: 'expiration' } })).json().data[0];
    expect(errorOf(await reverse(expiration.id)).code).toBe('not_reversible');
    expect(await customer(3)).toMatchObject({ points_balance: 0, points_earned_lifetime: 0 });
  });

  it("answers 404 for another shop's event, 400 for a bad id, and refuses unknown body fields", async () => {
    const other = await t.createShop();
    await createCustomers(t, 1, 1, other.token);
    const theirs = (
      await t.request('POST', `${API}/points_events`, { token: other.token, body: { customer_identifier: '1', source: 'manual', points_amount: 5 } })
    ).json().data;
    expect((await reverse(theirs.id)).statusCode).toBe(404);
    expect((await reverse(0)).statusCode).toBe(400);
    expect((await t.request('POST', `${API}/points_events/abc/reverse`)).statusCode).toBe(400);
    const unknown = await t.request('POST', `${API}/points_events/${theirs.id}/reverse`, { token: other.token, body: { reason: 'x' } });
    expect(unknown.statusCode).toBe(422);
    await expectConsistentLedger(t, other.shop.id);
  });

  it('reverses 20 racing requests for one event once (the others already_reversed)', async () => {
    const grant = (await postEvent(t, { customer_identifier: '4', source: 'manual', points_amount: 10 })).json().data;
    const responses = await Promise.all(Array.from({ length: 20 }, () => reverse(grant.id)));
    expect(responses.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(responses.filter((r) => r.statusCode === 409).map((r) => errorOf(r).code)).toEqual(Array(19).fill('already_reversed'));
    expect(await customer(4)).toMatchObject({ points_balance: 0 });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
