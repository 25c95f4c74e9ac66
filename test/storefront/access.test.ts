import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postEvent } from '../ledger/fixtures.js';
import { asCustomer, createKey, customerToken, STOREFRONT, type TestKey } from './fixtures.js';

// docs/storefront.md: every storefront answer is the token's customer's own; a customer token
// reaches no merchant path and a merchant token no storefront path. The `it` blocks share two
// shops and one clock, in order.

type Route = { method: 'GET' | 'POST' | 'PUT'; path: string };
const STOREFRONT_ROUTES: Route[] = [
  { method: 'GET', path: '/me' },
  { method: 'GET', path: '/me/points_events' },
  { method: 'GET', path: '/me/rewards' },
  { method: 'GET', path: '/me/redemptions' },
  { method: 'POST', path: '/me/redemptions' },
  { method: 'PUT', path: '/me/birthday' },
  { method: 'POST', path: '/me/referrals' },
];

describe(`the storefront API's boundaries (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let key: TestKey;
  let b: { token: string; key: TestKey };
  let ada: string;
  let grace: string;
  let adaInB: string;
  let rewardId: number;

  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 2);
    key = await createKey(t);
    const shopB = await t.createShop({ name: 'B' });
    await createCustomers(t, 1, 1, shopB.token);
    b = { token: shopB.token, key: await createKey(t, [], shopB.token) };
    for (const [id, points] of [
      ['1', 1000],
      ['2', 300],
    ] as const) {
      expect(
        (
          await postEvent(t, {
            customer_identifier: id,
            source: 'manual',
            points_amount: points,
            internal_note: `internal ${id}`,
            external_note: `Welcome ${id}`,
          })
        ).statusCode,
      ).toBe(201);
    }
    const reward = await t.request('POST', `${API}/rewards`, {
      body: { name: 'Tote', kind: 'free_product', value: 12, points_price: 400, limit_per_customer: 2 },
    });
    rewardId = reward.json().data.id;
    ada = await customerToken(t, key, { sub: '1' });
    grace = await customerToken(t, key, { sub: '2' });
    adaInB = await customerToken(t, b.key, { sub: '1' });
  });
  afterAll(() => t.close());

  it('shows each customer their own account, events and rewards only', async () => {
    const me = (await asCustomer(t, 'GET', '/me', ada)).json().data;
    expect(me).toMatchObject({ remote_id: 1, email: 'customer1@example.com', points_balance: 1000, vip_tier: null, upcoming_expiries: [], birthday: null });
    expect((await asCustomer(t, 'GET', '/me', grace)).json().data).toMatchObject({ remote_id: 2, points_balance: 300 });
    // Customer 1 of shop B is another person with another balance.
    expect((await asCustomer(t, 'GET', '/me', adaInB)).json().data).toMatchObject({ remote_id: 1, points_balance: 0 });

    const events = (await asCustomer(t, 'GET', '/me/points_events', ada)).json();
    expect(events.data).toHaveLength(1);
    expect(events.data[0]).toEqual({
      id: expect.any(Number),
      source: 'manual',
      points_amount: 1000,
      credits_amount: 0,
      external_note: 'Welcome 1',
      custom_action_name: null,
      applied_at: expect.any(String),
      expires_at: null,
      order_remote_id: null,
      reversed_by_event_id: null,
    });
    expect((await asCustomer(t, 'GET', '/me/points_events', adaInB)).json().data).toEqual([]);

    const rewards = (await asCustomer(t, 'GET', '/me/rewards', grace)).json().data;
    expect(rewards).toEqual([
      { id: rewardId, name: 'Tote', kind: 'free_product', value: 12, points_price: 400, affordable: false, points_needed: 100, redemptions_left: 2 },
    ]);
    expect((await asCustomer(t, 'GET', '/me/rewards', adaInB)).json().data).toEqual([]);
  });

  it('redeems once for a retried Idempotency-Key, scoped to the customer', async () => {
    const headers = { 'idempotency-key': 'redeem-1' };
    const first = await asCustomer(t, 'POST', '/me/redemptions', ada, { body: { reward_id: rewardId }, headers });
    expect(first.statusCode, first.body).toBe(201);
    const again = await asCustomer(t, 'POST', '/me/redemptions', ada, { body: { reward_id: rewardId }, headers });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect((await asCustomer(t, 'GET', '/me', ada)).json().data.points_balance).toBe(600);
    expect((await asCustomer(t, 'GET', '/me/rewards', ada)).json().data[0]).toMatchObject({ affordable: true, redemptions_left: 1 });
    // The same key is another customer's own: it is not a replay of Ada's.
    const graceTry = await asCustomer(t, 'POST', '/me/redemptions', grace, { body: { reward_id: rewardId }, headers });
    expect(graceTry.statusCode).toBe(422);
    expect(graceTry.json().error.code).toBe('insufficient_balance');
    // ...nor of the merchant's.
    const merchant = await t.request('POST', `${API}/redemptions`, { body: { reward_id: rewardId, customer_identifier: '1' }, headers });
    expect(merchant.statusCode).toBe(201);
    expect(merchant.headers['idempotent-replayed']).toBeUndefined();
    expect((await asCustomer(t, 'GET', '/me', ada)).json().data.points_balance).toBe(200);

    const mine = (await asCustomer(t, 'GET', '/me/redemptions', ada)).json().data;
    expect(mine.map((r: { customer: { remote_id: number } }) => r.customer.remote_id)).toEqual([1, 1]);
    expect((await asCustomer(t, 'GET', '/me/redemptions', grace)).json().data).toEqual([]);
    await expectConsistentLedger(t);
  });

  it('sets a birthday once, refers a friend with the same checks as the merchant route', async () => {
    // A write without a body is refused as on the merchant side (docs/errors.md): 400 invalid_json.
    for (const path of ['/me/birthday', '/me/referrals'] as const) {
      const none = await asCustomer(t, path === '/me/birthday' ? 'PUT' : 'POST', path, grace);
      expect(none.statusCode, none.body).toBe(400);
      expect(none.json().error.code).toBe('invalid_json');
    }
    const set = await asCustomer(t, 'PUT', '/me/birthday', grace, { body: { birthday: '1990-05-17' } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data).toMatchObject({ remote_id: 2, birthday: '1990-05-17' });
    const again = await asCustomer(t, 'PUT', '/me/birthday', grace, { body: { birthday: '1991-01-01' } });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('birthday_already_set');
    expect((await t.request('GET', `${API}/customers/2`)).json().data.birthday).toBe('1990-05-17');

    const referral = await asCustomer(t, 'POST', '/me/referrals', grace, { body: { referred_email: 'friend@example.com' } });
    expect(referral.statusCode, referral.body).toBe(201);
    expect(referral.json().data).toMatchObject({ referrer_remote_id: 2, referred_email: 'friend@example.com', status: 'pending' });
    const self = await asCustomer(t, 'POST', '/me/referrals', grace, { body: { referred_email: 'Customer2@example.com' } });
    expect(self.json().error.code).toBe('self_referral');
    const twice = await asCustomer(t, 'POST', '/me/referrals', ada, { body: { referred_email: 'friend@example.com' } });
    expect(twice.json().error.code).toBe('already_referred');
    await expectConsistentLedger(t);
  });

  it('never shows internal_note, on any storefront answer', async () => {
    for (const route of STOREFRONT_ROUTES.filter((r) => r.method === 'GET')) {
      const res = await asCustomer(t, route.method, route.path, ada);
      expect(res.statusCode).toBe(200);
      expect(res.body).not.toContain('internal');
    }
  });

  it('refuses a merchant token on every storefront path, and a customer token on every merchant path', async () => {
    for (const route of STOREFRONT_ROUTES) {
      for (const authorization of [`Bearer ${t.token}`, t.token]) {
        const res = await t.app.inject({
          method: route.method,
          url: `${STOREFRONT}${route.path}`,
          headers: { authorization },
          payload: route.method === 'GET' ? undefined : {},
        });
        expect(res.statusCode, `${route.method} ${route.path}`).toBe(401);
      }
    }
    const programme = await t.app.inject({ method: 'GET', url: `${STOREFRONT}/programme`, headers: { authorization: `Bearer ${t.token}` } });
    expect(programme.statusCode).toBe(401);
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const merchant = Object.entries(doc.paths).filter(([path]) => path.startsWith(API));
    expect(merchant.length).toBeGreaterThan(20);
    for (const [path, item] of merchant) {
      for (const method of Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
        const res = await t.app.inject({
          method: method.toUpperCase() as 'GET',
          url: path.replace(/\{[^}]+\}/g, '1'),
          headers: { authorization: `Bearer ${ada}` },
          payload: method === 'get' || method === 'delete' ? undefined : {},
        });
        expect(res.statusCode, `${method} ${path}`).toBe(401);
      }
    }
  });
});
