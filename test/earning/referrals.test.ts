import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailKey } from '../../src/referrals/email.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createWebhook, storedDeliveries } from '../webhooks/fixtures.js';

// Referrals that reward both sides (docs/earning.md, "Referrals"), over HTTP.
// The `it` blocks share one shop, in order.

describe(`referrals (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let adaCode: string;
  beforeAll(async () => {
    t = await setup();
    for (const body of [
      { kind: 'referral_referrer', points_amount: 100 },
      { kind: 'referral_friend', points_amount: 50 },
      { kind: 'order', points_per_unit: 1, unit_amount: 1 },
    ]) {
      expect((await t.request('POST', `${API}/earning_rules`, { body })).statusCode).toBe(201);
    }
    const ada = await t.request('PUT', `${API}/customers/1`, { body: { email: 'adalovelace@gmail.com' } });
    adaCode = ada.json().data.referral_code;
  });
  afterAll(() => t.close());

  const refer = (body: Record<string, unknown>) => t.request('POST', `${API}/referrals`, { body });
  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const putOrder = (id: number, customerId: number) =>
    t.request('PUT', `${API}/orders/${id}`, {
      body: { customer_remote_id: customerId, total: 20, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-15T10:00:00Z' },
    });

  it('gives every customer a referral code of their own', async () => {
    expect(adaCode).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{12}$/);
    const other = (await t.request('PUT', `${API}/customers/9`, { body: { email: 'nine@example.com' } })).json().data.referral_code;
    expect(other).not.toBe(adaCode);
    // A PUT that replaces the customer keeps the code; a request cannot set it.
    expect((await t.request('PUT', `${API}/customers/1`, { body: { email: 'adalovelace@gmail.com', first_name: 'Ada' } })).json().data.referral_code).toBe(
      adaCode,
    );
    const set = await t.request('PUT', `${API}/customers/1`, { body: { email: 'adalovelace@gmail.com', referral_code: 'MINE' } });
    expect(errorOf(set).details).toEqual([expect.objectContaining({ param: 'referral_code', code: 'unknown_parameter' })]);
  });

  it('refuses a self-referral, whatever the case, dots and +tag of a Gmail address', async () => {
    expect(emailKey('Ada.Lovelace+x@GoogleMail.com')).toBe('adalovelace@gmail.com');
    const res = await refer({ referral_code: adaCode.toLowerCase(), referred_email: 'Ada.Lovelace+x@gmail.com' });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res)).toMatchObject({ code: 'self_referral' });
    const both = await refer({ referral_code: adaCode, referrer_remote_id: 1, referred_email: 'x@example.com' });
    expect(errorOf(both).details).toEqual([expect.objectContaining({ param: 'referrer_remote_id', code: 'missing' })]);
    const unknown = await refer({ referral_code: 'NOPE', referred_email: 'x@example.com' });
    expect(errorOf(unknown).details).toEqual([expect.objectContaining({ param: 'referral_code', code: 'referral_code_not_found' })]);
  });

  it("completes on the friend's first paid order and rewards both sides once", async () => {
    await createWebhook(t, 'referral.completed');
    const made = await refer({ referrer_remote_id: 1, referred_email: 'grace@example.com' });
    expect(made.statusCode, made.body).toBe(201);
    const referral = made.json().data;
    expect(referral).toMatchObject({
      referrer_remote_id: 1,
      referred_email: 'grace@example.com',
      status: 'pending',
      referred_remote_id: null,
      completed_at: null,
    });
    expect(errorOf(await refer({ referrer_remote_id: 9, referred_email: 'Grace@Example.com' }))).toMatchObject({ code: 'already_referred' });

    expect((await t.request('PUT', `${API}/customers/2`, { body: { email: 'Grace@example.com' } })).statusCode).toBe(201);
    expect((await t.request('GET', `${API}/referrals/${referral.id}`)).json().data.status).toBe('pending');
    expect((await putOrder(500, 2)).statusCode).toBe(201);
    const done = (await t.request('GET', `${API}/referrals/${referral.id}`)).json().data;
    expect(done).toMatchObject({ status: 'completed', referred_remote_id: 2, completed_at: expect.any(String) });
    expect(await customer(1)).toMatchObject({ points_balance: 100 });
    expect(await customer(2)).toMatchObject({ points_balance: 50 + 20 });
    // The order sent again, and a second order, complete nothing more.
    await putOrder(500, 2);
    await putOrder(501, 2);
    expect(await customer(1)).toMatchObject({ points_balance: 100 });
    const sent = (await storedDeliveries(t)).filter((d) => d.topic === 'referral.completed');
    expect(sent.map((d) => d.body.data)).toEqual([done]);
    expect(errorOf(await refer({ referrer_remote_id: 9, referred_email: 'grace@example.com' })).code).toMatch(/already_(referred|customer)/);
  });

  it('refuses a friend who already has a paid order', async () => {
    await t.request('PUT', `${API}/customers/3`, { body: { email: 'linus@example.com' } });
    await putOrder(600, 3);
    expect(errorOf(await refer({ referrer_remote_id: 1, referred_email: 'LINUS@example.com' }))).toMatchObject({ code: 'already_customer' });
  });

  it('completes by hand, cancels, and refuses either once the referral is not pending', async () => {
    const hedy = (await refer({ referrer_remote_id: 9, referred_email: 'hedy@example.com' })).json().data;
    const completed = await t.request('POST', `${API}/referrals/${hedy.id}/complete`);
    expect(completed.statusCode).toBe(200);
    expect(completed.json().data).toMatchObject({ status: 'completed', referred_remote_id: null });
    expect(await customer(9)).toMatchObject({ points_balance: 100 });
    const again = await t.request('POST', `${API}/referrals/${hedy.id}/complete`);
    expect(again.statusCode).toBe(409);
    expect(errorOf(again).code).toBe('referral_not_pending');

    const ken = (await refer({ referrer_remote_id: 9, referred_email: 'ken@example.com' })).json().data;
    expect((await t.request('POST', `${API}/referrals/${ken.id}/cancel`)).json().data).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(String) });
    expect(errorOf(await t.request('POST', `${API}/referrals/${ken.id}/cancel`)).code).toBe('referral_not_pending');
    expect((await refer({ referrer_remote_id: 1, referred_email: 'ken@example.com' })).statusCode).toBe(201);
    expect((await t.request('PATCH', `${API}/referrals/${ken.id}`, { body: { status: 'completed' } })).statusCode).toBe(404);
    expect((await t.request('POST', `${API}/referrals/999999/complete`)).statusCode).toBe(404);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
