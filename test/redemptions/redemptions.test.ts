import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredLots } from '../../src/ledger/expiry.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { countRows, createCustomers, expectConsistentLedger, postBatch, postEvent } from '../ledger/fixtures.js';
import { createWebhook, storedDeliveries } from '../webhooks/fixtures.js';

// Rewards that customers redeem (docs/ledger.md, "Redemptions"), over HTTP.
// The `it` blocks share one shop and one clock, in order; each uses customers of its own.

const START = Date.UTC(2026, 0, 15, 12);
const at = (days: number) => new Date(START + days * DAY).toISOString();
const CODE = /^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{12}$/;

describe(`redemptions (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null }, now: START });
    await createCustomers(t, 12);
  });
  afterAll(() => t.close());

  const createReward = async (fields: Record<string, unknown>) => {
    const res = await t.request('POST', `${API}/rewards`, { body: { name: '5 € off', kind: 'fixed_amount_discount', value: 5, ...fields } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number };
  };
  const redeem = (reward_id: unknown, customer_identifier: unknown, headers?: Record<string, string>) =>
    t.request('POST', `${API}/redemptions`, { body: { reward_id, customer_identifier }, ...(headers ? { headers } : {}) });
  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const action = (id: number, verb: 'use' | 'void') => t.request('POST', `${API}/redemptions/${id}/${verb}`);

  it('shows the new reward fields, with their bounds', async () => {
    const reward = await createReward({ points_price: 500, limit_per_customer: 3, code_prefix: 'SUMMER-', code_valid_days: 30 });
    expect(reward).toMatchObject({ limit_per_customer: 3, code_prefix: 'SUMMER-', code_valid_days: 30 });
    const plain = await createReward({ points_price: 100 });
    expect(plain).toMatchObject({ limit_per_customer: null, code_prefix: null, code_valid_days: null });
    const bad = await t.request('POST', `${API}/rewards`, {
      body: { name: 'x', kind: 'free_shipping', points_price: 1, code_prefix: 'has space', code_valid_days: 0 },
    });
    expect(bad.statusCode).toBe(422);
    expect(
      errorOf(bad)
        .details!.map((d) => d.param)
        .sort(),
    ).toEqual(['code_prefix', 'code_valid_days']);
  });

  it('redeems until the balance runs out; the next is insufficient_balance and nothing changes', async () => {
    await createWebhook(t, 'redemption.created');
    const reward = await createReward({ name: 'Summer 5 €', points_price: 500, code_prefix: 'SUMMER-', code_valid_days: 30 });
    expect((await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1200 })).statusCode).toBe(201);

    const codes: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await redeem(reward.id, 'customer1@example.com');
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      expect(data).toMatchObject({
        reward: { id: reward.id, name: 'Summer 5 €' },
        customer: { remote_id: 1, email: 'customer1@example.com' },
        points_spent: 500,
        status: 'issued',
        expires_at: at(30),
        void_event_id: null,
        used_at: null,
        voided_at: null,
        created_at: at(0),
      });
      expect(data.code.startsWith('SUMMER-')).toBe(true);
      expect(data.code.slice('SUMMER-'.length)).toMatch(CODE);
      codes.push(data.code);
      const event = (await t.request('GET', `${API}/points_events/${data.points_event_id}`)).json().data;
      expect(event).toMatchObject({ source: 'reward_redemption', points_amount: -500, redemption_id: data.id, external_note: 'Summer 5 €' });
    }
    expect(new Set(codes).size).toBe(2);
    expect(await customer(1)).toMatchObject({ points_balance: 200, points_spent_lifetime: 1000 });

    const events = await countRows(t, 'points_events');
    const redemptions = (await t.request('GET', `${API}/redemptions`)).json().data.length;
    const refused = await redeem(reward.id, '1');
    expect(refused.statusCode).toBe(422);
    expect(errorOf(refused)).toMatchObject({ code: 'insufficient_balance', message: `Reward ${reward.id} costs 500 points; the customer has 200 available` });
    expect(await countRows(t, 'points_events')).toBe(events);
    expect((await t.request('GET', `${API}/redemptions`)).json().data).toHaveLength(redemptions);
    expect(await customer(1)).toMatchObject({ points_balance: 200, points_spent_lifetime: 1000 });

    const sent = (await storedDeliveries(t)).filter((d) => d.topic === 'redemption.created');
    expect(sent.map((d) => d.body.data.code)).toEqual(codes);
  });

  it("returns a voided redemption's points into their original lots, which expire on their own dates", async () => {
    await createWebhook(t, 'redemption.voided');
    const reward = await createReward({ points_price: 300 });
    expect(
      (
        await postBatch(t, [
          { customer_identifier: '2', source: 'manual', points_amount: 100, expires_at: at(10) },
          { customer_identifier: '2', source: 'manual', points_amount: 500, expires_at: at(300) },
        ])
      ).statusCode,
    ).toBe(201);
    const redemption = (await redeem(reward.id, '2')).json().data;
    expect(redemption.code).toMatch(CODE);
    expect(await customer(2)).toMatchObject({ points_balance: 300, next_expiry: { points: 300, expires_at: at(300) } });

    const voided = await action(redemption.id, 'void');
    expect(voided.statusCode, voided.body).toBe(200);
    const data = voided.json().data;
    expect(data).toMatchObject({ id: redemption.id, status: 'voided', voided_at: at(0), code: redemption.code });
    const reversal = (await t.request('GET', `${API}/points_events/${data.void_event_id}`)).json().data;
    expect(reversal).toMatchObject({ source: 'reversal', points_amount: 300, reverses_event_id: redemption.points_event_id, redemption_id: redemption.id });
    expect(await customer(2)).toMatchObject({ points_balance: 600, points_spent_lifetime: 0, next_expiry: { points: 100, expires_at: at(10) } });
    expect((await storedDeliveries(t)).filter((d) => d.topic === 'redemption.voided').map((d) => d.body.data)).toEqual([data]);

    // Neither used nor voided again; the points event is not reversible on its own.
    expect(errorOf(await action(redemption.id, 'void')).code).toBe('redemption_not_voidable');
    expect((await action(redemption.id, 'void')).statusCode).toBe(409);
    expect(errorOf(await action(redemption.id, 'use')).code).toBe('redemption_not_usable');
    const second = (await redeem(reward.id, '2')).json().data;
    const direct = await t.request('POST', `${API}/points_events/${second.points_event_id}/reverse`);
    expect(direct.statusCode).toBe(422);
    expect(errorOf(direct)).toMatchObject({ code: 'not_reversible', message: expect.stringContaining(`POST /redemptions/${second.id}/void`) });
    expect((await action(second.id, 'void')).statusCode).toBe(200);

    // The 100 points of the 10-day lot expire on day 10, not later.
    t.clock.advance(10 * DAY);
    expect(await customer(2)).toMatchObject({ points_balance: 500, next_expiry: { points: 500, expires_at: at(300) } });
    expect(await sweepExpiredLots(t.database.db, t.clock.now)).toBe(1);
    const last = (await t.request('GET', `${API}/customers/2/points_events`, { query: { 'pagination[limit]': '50' } })).json().data.at(-1);
    expect(last).toMatchObject({ source: 'expiration', points_amount: -100 });
  });

  it('marks an issued redemption used, not once it is used, voided or expired', async () => {
    const reward = await createReward({ points_price: 10, code_valid_days: 5 });
    await postEvent(t, { customer_identifier: '3', source: 'manual', points_amount: 100 });
    const first = (await redeem(reward.id, '3')).json().data;
    const used = await action(first.id, 'use');
    expect(used.statusCode).toBe(200);
    expect(used.json().data).toMatchObject({ status: 'used', used_at: new Date(t.clock.now).toISOString() });
    expect(errorOf(await action(first.id, 'use'))).toMatchObject({ code: 'redemption_not_usable' });
    const notVoidable = await action(first.id, 'void');
    expect(notVoidable.statusCode).toBe(409);
    expect(errorOf(notVoidable)).toMatchObject({
      code: 'redemption_not_voidable',
      message: `Redemption ${first.id} was used; only an issued redemption can be voided`,
    });

    const second = (await redeem(reward.id, '3')).json().data;
    t.clock.advance(5 * DAY);
    const expired = await action(second.id, 'use');
    expect(expired.statusCode).toBe(409);
    expect(errorOf(expired).message).toContain('expired');
    // An expired code's points can still be given back.
    expect((await action(second.id, 'void')).statusCode).toBe(200);
    expect(await customer(3)).toMatchObject({ points_balance: 90 });
    expect((await action(999_999, 'use')).statusCode).toBe(404);
    expect((await t.request('POST', `${API}/redemptions/abc/void`)).statusCode).toBe(400);
  });

  it('refuses disabled rewards, unknown rewards and customers, and redemptions over the limit (voided ones count)', async () => {
    const reward = await createReward({ points_price: 10, limit_per_customer: 2 });
    await postEvent(t, { customer_identifier: '4', source: 'manual', points_amount: 100 });
    const first = (await redeem(reward.id, '4')).json().data;
    expect((await action(first.id, 'void')).statusCode).toBe(200);
    expect((await redeem(reward.id, '4')).statusCode).toBe(201);
    const limited = await redeem(reward.id, '4');
    expect(limited.statusCode).toBe(422);
    expect(errorOf(limited)).toMatchObject({
      code: 'redemption_limit_reached',
      message: `The customer has redeemed reward ${reward.id} 2 times, its limit per customer`,
    });
    // Another customer has a limit of their own.
    await postEvent(t, { customer_identifier: '5', source: 'manual', points_amount: 100 });
    expect((await redeem(reward.id, '5')).statusCode).toBe(201);

    expect((await t.request('PATCH', `${API}/rewards/${reward.id}`, { body: { enabled: false } })).statusCode).toBe(200);
    const disabled = await redeem(reward.id, '5');
    expect(disabled.statusCode).toBe(422);
    expect(errorOf(disabled).code).toBe('reward_disabled');

    const unknown = await redeem(987_654, 'nobody@example.com');
    expect(unknown.statusCode).toBe(422);
    expect(errorOf(unknown)).toMatchObject({
      code: 'validation_failed',
      details: [
        { param: 'reward_id', code: 'reward_not_found' },
        { param: 'customer_identifier', code: 'customer_not_found' },
      ],
    });
    const bad = await redeem('12', '');
    expect(bad.statusCode).toBe(422);
    expect(
      errorOf(bad)
        .details!.map((d) => d.param)
        .sort(),
    ).toEqual(['customer_identifier', 'reward_id']);
    const extra = await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '5', points: 1 } });
    expect(errorOf(extra).details).toEqual([expect.objectContaining({ param: 'points', code: 'unknown_parameter' })]);
  });

  it('replays a redemption retried with its Idempotency-Key, and never redeems twice', async () => {
    const reward = await createReward({ points_price: 10 });
    await postEvent(t, { customer_identifier: '6', source: 'manual', points_amount: 100 });
    const headers = { 'idempotency-key': 'redeem-6' };
    const responses = await Promise.all(Array.from({ length: 10 }, () => redeem(reward.id, '6', headers)));
    const created = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const r of responses) if (r.statusCode !== 409) expect(r.body).toBe(created[0]!.body);
    const replay = await redeem(reward.id, '6', headers);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(created[0]!.body);
    expect(await customer(6)).toMatchObject({ points_balance: 90 });
  });

  it('issues each pool code at most once under 50 racing redemptions, then answers reward_out_of_codes', async () => {
    const reward = await createReward({ points_price: 10 });
    const pool = Array.from({ length: 10 }, (_, i) => `POOL-${String(i).padStart(4, '0')}`);
    const added = await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: pool } });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json().data).toEqual({ reward_id: reward.id, available: 10, issued: 0, added: 10 });
    await postEvent(t, { customer_identifier: '7', source: 'manual', points_amount: 200 });

    const responses = await Promise.all(Array.from({ length: 50 }, () => redeem(reward.id, '7')));
    const won = responses.filter((r) => r.statusCode === 201).map((r) => r.json().data);
    expect(won).toHaveLength(10);
    expect(new Set(won.map((r) => r.code))).toEqual(new Set(pool));
    for (const r of responses.filter((r) => r.statusCode !== 201)) {
      expect(r.statusCode).toBe(422);
      expect(errorOf(r).code).toBe('reward_out_of_codes');
    }
    expect(await customer(7)).toMatchObject({ points_balance: 100, points_spent_lifetime: 100 });
    expect((await t.request('GET', `${API}/rewards/${reward.id}/codes`)).json().data).toEqual({ reward_id: reward.id, available: 0, issued: 10 });
    // The pool is issued in upload order; a void gives points back, not the code.
    expect(won.map((r) => r.code).sort()).toEqual(pool);
    expect((await action(won[0]!.id, 'void')).statusCode).toBe(200);
    expect(errorOf(await redeem(reward.id, '7')).code).toBe('reward_out_of_codes');
    expect((await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: ['POOL-0100'] } })).statusCode).toBe(201);
    expect((await redeem(reward.id, '7')).json().data.code).toBe('POOL-0100');
  });

  it('refuses codes given twice or already held in the shop, all or nothing', async () => {
    const reward = await createReward({ points_price: 10 });
    const taken = (await t.request('GET', `${API}/redemptions`, { query: { 'pagination[limit]': '1' } })).json().data[0].code;
    const res = await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: ['NEW-1', 'POOL-0001', 'NEW-2', 'NEW-1', taken] } });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res)).toMatchObject({
      code: 'validation_failed',
      message: '3 codes are given twice or already held in the shop; none was added',
      details: [
        { param: 'codes[1]', code: 'code_taken' },
        { param: 'codes[3]', code: 'duplicate' },
        { param: 'codes[4]', code: 'code_taken' },
      ],
    });
    expect((await t.request('GET', `${API}/rewards/${reward.id}/codes`)).json().data).toEqual({ reward_id: reward.id, available: 0, issued: 0 });
    const tooMany = await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: Array.from({ length: 10_001 }, (_, i) => `C${i}`) } });
    expect(tooMany.statusCode).toBe(422);
    expect(errorOf(tooMany).details).toEqual([expect.objectContaining({ param: 'codes', code: 'too_many' })]);
    const blank = await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: ['ok', 'has space', ''] } });
    expect(errorOf(blank).details!.map((d) => d.param)).toEqual(['codes[1]', 'codes[2]']);
    const full = await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: Array.from({ length: 10_000 }, (_, i) => `BULK-${i}`) } });
    expect(full.statusCode).toBe(201);
    expect(full.json().data).toMatchObject({ available: 10_000, added: 10_000 });
    expect((await t.request('GET', `${API}/rewards/999999/codes`)).statusCode).toBe(404);
    expect((await t.request('POST', `${API}/rewards/999999/codes`, { body: { codes: ['X'] } })).statusCode).toBe(404);
  });

  it('lists redemptions in both pagination modes, by customer', async () => {
    const all = (await t.request('GET', `${API}/redemptions`, { query: { 'pagination[per_page]': '250' } })).json().data;
    expect(all.length).toBeGreaterThan(20);
    const ids = all.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    const cursor = await t.request('GET', `${API}/redemptions`, { query: { 'pagination[limit]': '5', 'pagination[since_id]': String(ids[2]) } });
    expect(cursor.json()).toMatchObject({ links: { since_id: ids[2], limit: 5, next_since_id: ids[7] } });
    expect(cursor.json().data.map((r: { id: number }) => r.id)).toEqual(ids.slice(3, 8));

    const of7 = all.filter((r: { customer: { remote_id: number } }) => r.customer.remote_id === 7);
    const filtered = (await t.request('GET', `${API}/redemptions`, { query: { customer_identifier: 'Customer7@example.com' } })).json().data;
    expect(filtered).toEqual(of7);
    expect((await t.request('GET', `${API}/customers/7/redemptions`, { query: { 'pagination[limit]': '250' } })).json().data).toEqual(of7);
    expect((await t.request('GET', `${API}/redemptions`, { query: { customer_identifier: '424242' } })).json().data).toEqual([]);
    expect((await t.request('GET', `${API}/customers/424242/redemptions`)).statusCode).toBe(404);
    const one = await t.request('GET', `${API}/redemptions/${of7[0].id}`);
    expect(one.json().data).toEqual(of7[0]);
    expect((await t.request('GET', `${API}/redemptions/999999`)).statusCode).toBe(404);

    // Another shop sees none of them.
    const other = await t.createShop();
    expect((await t.request('GET', `${API}/redemptions/${of7[0].id}`, { token: other.token })).statusCode).toBe(404);
    expect((await t.request('GET', `${API}/redemptions`, { token: other.token })).json().data).toEqual([]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
