import fastJson from 'fast-json-stringify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataEnvelope } from '../../src/http/schemas.js';
import { Me } from '../../src/storefront/schemas.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch } from '../ledger/fixtures.js';
import { asCustomer, createKey, customerToken, type TestKey } from './fixtures.js';

// GET /me's upcoming_expiries: one entry per expiry instant, soonest first, up to 5, exact
// however many lots share an instant, and never what expired already (swept or not). And the
// rest of /me: what the merchant's Customer record shows of the same customer at the same
// instant, sent as the route's schema would serialise it.

const START = Date.UTC(2026, 0, 15, 12);
const at = (days: number) => new Date(START + days * DAY).toISOString();

/** For a describe's tests: a shop whose lots expire per event, at START, with customers 1..n and a storefront key; `me()` is customer 1's GET /me. */
function shopper(customers: number) {
  const shop = {
    t: undefined as unknown as TestContext,
    key: undefined as unknown as TestKey,
    me: async () => (await asCustomer(shop.t, 'GET', '/me', await customerToken(shop.t, shop.key))).json().data,
  };
  beforeAll(async () => {
    shop.t = await setup({ shop: { per_event_expiry: true }, now: START });
    await createCustomers(shop.t, customers);
    shop.key = await createKey(shop.t);
  });
  afterAll(() => shop.t.close());
  return shop;
}

describe(`the shopper's upcoming expiries (${TEST_DIALECT})`, () => {
  const shop = shopper(1);
  const me = () => shop.me();

  it('sums the lots of each instant, points and credits, soonest first, the first 5 only', async () => {
    const { t } = shop;
    const grant = (days: number, points: number, credits = 0) => ({
      customer_identifier: '1',
      source: 'manual',
      points_amount: points,
      credits_amount: credits,
      expires_at: at(days),
    });
    // 70 lots at day 10: more than one page of the lots' index.
    const events = [
      ...Array.from({ length: 70 }, () => grant(10, 1)),
      grant(20, 5, 1.5),
      grant(5, 0, 2.25),
      grant(30, 7),
      grant(40, 8),
      grant(50, 9),
      grant(60, 10),
    ];
    events.push({ customer_identifier: '1', source: 'manual', points_amount: 1000, credits_amount: 0 } as never);
    expect((await postBatch(t, events)).statusCode).toBe(201);
    const data = await me();
    expect(data.upcoming_expiries).toEqual([
      { expires_at: at(5), points: 0, credits: 2.25 },
      { expires_at: at(10), points: 70, credits: 0 },
      { expires_at: at(20), points: 5, credits: 1.5 },
      { expires_at: at(30), points: 7, credits: 0 },
      { expires_at: at(40), points: 8, credits: 0 },
    ]);
    expect(data.next_expiry).toEqual({ expires_at: at(5), points: 0, credits: 2.25 });
  });

  it('leaves out what expired, before the sweep has written it off, and what was spent', async () => {
    const { t } = shop;
    expect((await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1', source: 'manual', points_amount: -20 } })).statusCode).toBe(
      201,
    );
    t.clock.advance(15 * DAY);
    const data = await me();
    expect(data.upcoming_expiries).toEqual([
      { expires_at: at(20), points: 5, credits: 1.5 },
      { expires_at: at(30), points: 7, credits: 0 },
      { expires_at: at(40), points: 8, credits: 0 },
      { expires_at: at(50), points: 9, credits: 0 },
      { expires_at: at(60), points: 10, credits: 0 },
    ]);
    expect(data.points_balance).toBe(1000 + 5 + 7 + 8 + 9 + 10);
    await expectConsistentLedger(t);
  });
});

describe(`the shopper's upcoming expiries, read once and kept while the lots are unchanged (${TEST_DIALECT})`, () => {
  const shop = shopper(2);
  const me = () => shop.me();
  const grant = (days: number, points: number) => ({ customer_identifier: '1', source: 'manual', points_amount: points, expires_at: at(days) });

  it('shows every change of the lots at once, and drops the instants that pass', async () => {
    const { t } = shop;
    expect((await postBatch(t, [grant(10, 1), grant(20, 2), grant(30, 3)])).statusCode).toBe(201);
    const three = [
      { expires_at: at(10), points: 1, credits: 0 },
      { expires_at: at(20), points: 2, credits: 0 },
      { expires_at: at(30), points: 3, credits: 0 },
    ];
    expect((await me()).upcoming_expiries).toEqual(three);
    expect((await me()).upcoming_expiries).toEqual(three);
    // Another customer's posting leaves this one's reading as it was.
    expect((await postBatch(t, [{ ...grant(15, 9), customer_identifier: '2' }])).statusCode).toBe(201);
    expect((await me()).upcoming_expiries).toEqual(three);
    // A lot at an instant between the ones shown: the balances change, and so do the lots.
    const granted = await postBatch(t, [grant(25, 4)]);
    expect(granted.statusCode).toBe(201);
    const four = [...three.slice(0, 2), { expires_at: at(25), points: 4, credits: 0 }, ...three.slice(2)];
    expect((await me()).upcoming_expiries).toEqual(four);
    // A grant and a deduction of as much: the balance is as it was, the lots are not (the
    // deduction spends the soonest lot, at day 10, and the grant's lot expires at day 40).
    expect((await postBatch(t, [grant(40, 1), { customer_identifier: '1', source: 'manual', points_amount: -1 }])).statusCode).toBe(201);
    const spent = [...four.slice(1), { expires_at: at(40), points: 1, credits: 0 }];
    expect((await me()).upcoming_expiries).toEqual(spent);
    // A reversal of a grant takes its lot away.
    const [ofFour] = granted.json().data as { id: number }[];
    expect((await t.request('POST', `${API}/points_events/${ofFour!.id}/reverse`, { body: {} })).statusCode).toBe(201);
    const reversed = spent.filter((e) => e.points !== 4);
    expect((await me()).upcoming_expiries).toEqual(reversed);
    // Time passes: what expired is no longer shown, swept or not.
    t.clock.advance(21 * DAY);
    expect((await me()).upcoming_expiries).toEqual(reversed.slice(1));
    await expectConsistentLedger(t);
  });
});

describe(`the shopper's account, as the merchant's record shows it (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let key: TestKey;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true }, now: START });
    await createCustomers(t, 2);
    key = await createKey(t);
  });
  afterAll(() => t.close());

  const shown = Object.keys(Me.properties).filter((name) => name !== 'upcoming_expiries');
  const serialize = fastJson(DataEnvelope(Me) as object);

  /** GET /me of the customer, checked against GET /customers/{id}; its data. */
  const sameAsRecord = async (remoteId = '1') => {
    const res = await asCustomer(t, 'GET', '/me', await customerToken(t, key, { sub: remoteId }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    // Byte for byte what the schema's serialiser writes: its fields only, in its order.
    expect(res.body).toBe(serialize(res.json()));
    const me = res.json().data;
    const record = (await t.request('GET', `${API}/customers/${remoteId}`)).json().data;
    expect(Object.fromEntries(shown.map((name) => [name, me[name]]))).toEqual(Object.fromEntries(shown.map((name) => [name, record[name]])));
    return me;
  };

  it('shows the tier held and the progress, at once after a tier or the metric changes', async () => {
    const tier = async (name: string, points_threshold: number) =>
      (await t.request('POST', `${API}/vip_tiers`, { body: { name, points_threshold } })).json().data;
    // Strings JSON must escape, and some it need not.
    const name = 'Ada "the Countess" \\ Lovelace, ünïcödé ☃ 𝄞 \u2028';
    const put = await t.request('PUT', `${API}/customers/1`, { body: { email: 'customer1@example.com', first_name: name } });
    expect(put.statusCode, put.body).toBe(200);
    expect((await sameAsRecord()).first_name).toBe(name);
    const silver = await tier('Silver "2"', 100);
    const gold = await tier('Gold', 1000);
    expect((await postBatch(t, [{ customer_identifier: '1', source: 'manual', points_amount: 500, expires_at: at(30) }])).statusCode).toBe(201);
    expect(await sameAsRecord()).toMatchObject({
      vip_tier: { id: silver.id, name: 'Silver "2"' },
      vip_tier_progress: { metric: 'points_earned', value: 500, next_tier: { id: gold.id, name: 'Gold' }, needed: 500 },
      next_expiry: { expires_at: at(30), points: 500, credits: 0 },
    });
    await sameAsRecord('2');
    expect((await t.request('PATCH', `${API}/vip_tiers/${silver.id}`, { body: { name: 'Argent' } })).statusCode).toBe(200);
    expect((await sameAsRecord()).vip_tier).toEqual({ id: silver.id, name: 'Argent' });
    expect((await t.request('DELETE', `${API}/vip_tiers/${gold.id}`)).statusCode).toBe(200);
    expect((await sameAsRecord()).vip_tier_progress.next_tier).toBeNull();
    expect((await t.request('PATCH', `${API}/shop`, { body: { vip_tier_metric: 'orders_count' } })).statusCode).toBe(200);
    expect((await sameAsRecord()).vip_tier_progress).toMatchObject({ metric: 'orders_count', value: 0 });
  });

  it('shows balances and the next expiry at every instant, before the sweep writes off what expired', async () => {
    const grant = (days: number, points: number, credits: number) => ({
      customer_identifier: '2',
      source: 'manual',
      points_amount: points,
      credits_amount: credits,
      expires_at: at(days),
    });
    expect((await postBatch(t, [grant(2, 10, 1.25), grant(4, 20, 0), grant(6, 30, 2.5)])).statusCode).toBe(201);
    let day = 0;
    for (const [until, points, credits] of [
      [0, 60, 3.75],
      [3, 50, 2.5],
      [5, 30, 2.5],
      [7, 0, 0],
    ] as const) {
      t.clock.advance((until - day) * DAY);
      day = until;
      expect(await sameAsRecord('2'), `day ${until}`).toMatchObject({ points_balance: points, credits_balance: credits });
    }
  });
});

describe(`the shopper's redemptions (${TEST_DIALECT})`, () => {
  const shop = shopper(2);

  it('lists only their own, with code and expiry, in both pagination modes, newest first on request', async () => {
    const { t, key } = shop;
    expect(
      (
        await postBatch(
          t,
          [1, 2].map((id) => ({ customer_identifier: String(id), source: 'manual', points_amount: 1000 })),
        )
      ).statusCode,
    ).toBe(201);
    const reward = (await t.request('POST', `${API}/rewards`, { body: { kind: 'free_shipping', name: 'Ship', points_price: 100, code_valid_days: 7 } })).json()
      .data;
    const redeem = (customer: string) => t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: customer } });
    const mine: { id: number; code: string }[] = [];
    for (const customer of ['1', '2', '1', '1']) {
      const res = await redeem(customer);
      expect(res.statusCode, res.body).toBe(201);
      if (customer === '1') mine.push(res.json().data);
    }
    const token = await customerToken(t, key);
    const list = (query: string) => asCustomer(t, 'GET', `/me/redemptions?${query}`, token);

    const cursor = await list('pagination[limit]=2');
    expect(cursor.statusCode).toBe(200);
    expect(cursor.json().data.map((r: { id: number }) => r.id)).toEqual(mine.slice(0, 2).map((r) => r.id));
    expect(cursor.json().links).toEqual({ since_id: 0, limit: 2, next_since_id: mine[1]!.id });
    const rest = (await list(`pagination[since_id]=${mine[1]!.id}&pagination[limit]=2`)).json();
    expect(rest.data.map((r: { id: number }) => r.id)).toEqual([mine[2]!.id]);
    expect(rest.links.next_since_id).toBeNull();

    const newest = (await list('pagination[per_page]=2&sort[order_direction]=desc')).json();
    expect(newest.data.map((r: { code: string }) => r.code)).toEqual([mine[2]!.code, mine[1]!.code]);
    expect(newest.data[0].expires_at).toBe(new Date(START + 7 * DAY).toISOString());
    expect(newest.data[0].customer.remote_id).toBe(1);
    expect(newest.links.next).toMatch(/pagination%5Bpage%5D=2|pagination\[page\]=2/);
    expect((await list('pagination[per_page]=0')).statusCode).toBe(400);
  });
});
