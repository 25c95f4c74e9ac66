import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../src/records/resources/index.js';
import { API, errorOf, setup, type TestContext, type TestShop } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { REFERENCED_ID, sample, seedReferences } from './samples.js';

describe(`records: writes and reads of every resource (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let other: TestShop;
  beforeAll(async () => {
    t = await setup();
    other = await t.createShop();
    await seedReferences(t.database.db, t.shop.id, RESOURCES, t.clock.now);
  });
  afterAll(() => t.close());

  describe.each(RESOURCES.map((r) => [r.path, r] as const))('%s', (path, r) => {
    const create = async (i: number, token?: string) => {
      const body = sample(r, i);
      if (r.write === 'upsert') return t.request('PUT', `${API}/${path}/${5000 + i}`, { body, ...(token ? { token } : {}) });
      return t.request('POST', `${API}/${path}`, { body, ...(token ? { token } : {}) });
    };

    it('creates a record that GET and the list show as written', async () => {
      const res = await create(1);
      expect(res.statusCode).toBe(201);
      const created = res.json().data;
      const { secret: _secret, ...shown } = created;
      expect(shown).toMatchObject(sample(r, 1));
      const id = created[r.id];
      const got = await t.request('GET', `${API}/${path}/${id}`);
      expect(got.statusCode).toBe(200);
      expect(got.json().data).toEqual(shown);
      const list = (await t.request('GET', `${API}/${path}?pagination[since_id]=${id - 1}&pagination[limit]=1`)).json();
      expect(list.data).toEqual([shown]);
    });

    it('answers 422 listing every bad field, and unknown fields', async () => {
      const bad = Object.fromEntries(Object.keys(sample(r, 0)).map((name) => [name, { not: 'valid' }]));
      const res =
        r.write === 'upsert'
          ? await t.request('PUT', `${API}/${path}/77`, { body: { ...bad, surprise: 1 } })
          : await t.request('POST', `${API}/${path}`, { body: { ...bad, surprise: 1 } });
      expect(res.statusCode).toBe(422);
      const params = errorOf(res)
        .details!.map((d) => d.param)
        .sort();
      expect(params).toEqual([...Object.keys(bad), 'surprise'].sort());
    });

    it("keeps shops apart: another shop's record answers 404 and never shows", async () => {
      const mine = (await create(2)).json().data[r.id];
      expect((await t.request('GET', `${API}/${path}/${mine}`, { token: other.token })).statusCode).toBe(404);
      if (r.write === 'crud') {
        expect((await t.request('PATCH', `${API}/${path}/${mine}`, { token: other.token, body: sample(r, 3) })).statusCode).toBe(404);
        expect((await t.request('DELETE', `${API}/${path}/${mine}`, { token: other.token })).statusCode).toBe(404);
        expect((await t.request('GET', `${API}/${path}/${mine}`)).statusCode).toBe(200);
      }
      const list = (await t.request('GET', `${API}/${path}`, { token: other.token })).json();
      expect(list.data).toEqual([]);
    });

    if (r.write === 'upsert') {
      it('PUT replaces the record: 200 when it existed, fields left out cleared', async () => {
        const first = await t.request('PUT', `${API}/${path}/6001`, { body: sample(r, 4) });
        expect(first.statusCode).toBe(201);
        const again = await t.request('PUT', `${API}/${path}/6001`, { body: sample(r, 5) });
        expect(again.statusCode).toBe(200);
        expect(again.json().data).toMatchObject({ ...sample(r, 5), remote_id: 6001, created_at: first.json().data.created_at });
        expect((await t.request('PUT', `${API}/${path}/abc`, { body: sample(r, 5) })).statusCode).toBe(400);
      });
    }

    if (r.write === 'crud') {
      it('PATCH changes only the fields sent; DELETE removes the record for good', async () => {
        const created = (await create(6)).json().data;
        const [name, value] = Object.entries(sample(r, 8)).find(([n]) => !r.fields[n]!.references)!;
        const patched = await t.request('PATCH', `${API}/${path}/${created.id}`, { body: { [name]: value } });
        expect(patched.statusCode).toBe(200);
        const { secret: _secret, ...before } = created;
        // A webhook's topic is the first of its topics.
        const linked = name === 'topics' ? { topic: (value as string[])[0] } : {};
        expect(patched.json().data).toEqual({ ...before, [name]: value, ...linked });
        expect((await t.request('PATCH', `${API}/${path}/${created.id}`, { body: {} })).statusCode).toBe(422);
        const deleted = await t.request('DELETE', `${API}/${path}/${created.id}`);
        expect(deleted.statusCode).toBe(200);
        expect(deleted.json()).toEqual({ data: { id: created.id, deleted: true } });
        expect((await t.request('GET', `${API}/${path}/${created.id}`)).statusCode).toBe(404);
        expect((await t.request('DELETE', `${API}/${path}/${created.id}`)).statusCode).toBe(404);
        expect((await t.request('PATCH', `${API}/${path}/${created.id}`, { body: { [name]: value } })).statusCode).toBe(404);
      });
    } else {
      it('offers no PATCH or DELETE', async () => {
        expect((await t.request('DELETE', `${API}/${path}/1`)).statusCode).toBe(404);
      });
    }
  });

  it('stores money exactly and rejects more than 2 decimals', async () => {
    const order = { customer_remote_id: null, total: 12.5, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-10T09:30:00+01:00' };
    const res = await t.request('PUT', `${API}/orders/42`, { body: order });
    expect(res.json().data).toMatchObject({ total: 12.5, placed_at: '2026-01-10T08:30:00.000Z' });
    const odd = await t.request('PUT', `${API}/orders/42`, { body: { ...order, total: 12.345 } });
    expect(errorOf(odd).details).toEqual([expect.objectContaining({ param: 'total', code: 'invalid_amount' })]);
    const fine = await t.request('PUT', `${API}/orders/42`, { body: { ...order, total: 19.99 } });
    expect(fine.json().data.total).toBe(19.99);
    const badCurrency = await t.request('PUT', `${API}/orders/42`, { body: { ...order, currency: 'eur', placed_at: 'yesterday' } });
    expect(
      errorOf(badCurrency)
        .details!.map((d) => d.param)
        .sort(),
    ).toEqual(['currency', 'placed_at']);
  });

  it("shows a webhook's secret once, on creation", async () => {
    const res = await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url: 'https://example.com/h' } });
    const { id, secret } = res.json().data;
    expect(secret).toMatch(/^whsec_[\w-]{32}$/);
    expect((await t.request('GET', `${API}/webhooks/${id}`)).json().data.secret).toBeUndefined();
    const list = (await t.request('GET', `${API}/webhooks`)).json().data;
    expect(list.every((w: Record<string, unknown>) => !('secret' in w))).toBe(true);
    const patched = await t.request('PATCH', `${API}/webhooks/${id}`, { body: { url: 'https://example.com/other' } });
    expect(patched.json().data.secret).toBeUndefined();
    expect((await t.request('PATCH', `${API}/webhooks/${id}`, { body: { secret: 'mine' } })).statusCode).toBe(422);
    expect((await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url: 'ftp://example.com' } })).statusCode).toBe(422);
  });

  it('checks rules across fields and references to other records', async () => {
    const pct = await t.request('POST', `${API}/rewards`, { body: { name: 'Half off', points_price: 100, kind: 'percentage_discount', value: 150 } });
    expect(errorOf(pct).details).toEqual([expect.objectContaining({ param: 'value', code: 'invalid_percentage' })]);
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Ship', points_price: 100, kind: 'free_shipping' } })).json().data;
    expect(reward).toMatchObject({ value: 0, enabled: true });
    const toPct = await t.request('PATCH', `${API}/rewards/${reward.id}`, { body: { kind: 'percentage_discount' } });
    expect(errorOf(toPct).details?.[0]?.code).toBe('invalid_percentage');
    const referral = await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 31337, referred_email: 'x@example.com' } });
    expect(errorOf(referral).details).toEqual([expect.objectContaining({ param: 'referrer_remote_id', code: 'customer_not_found' })]);
    const ok = await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: REFERENCED_ID, referred_email: 'x@example.com' } });
    expect(ok.json().data.status).toBe('pending');
    const attempt = await t.request('POST', `${API}/memberships/subscription_billing_attempts`, {
      body: { subscription_contract_remote_id: 1, status: 'failed', amount: 5, currency: 'EUR' },
    });
    expect(errorOf(attempt).details?.[0]?.code).toBe('subscription_contract_not_found');
  });

  it('keeps VIP tier names and thresholds unique in the shop', async () => {
    await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 } });
    const dup = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 } });
    expect(
      errorOf(dup)
        .details!.map((d) => d.code)
        .sort(),
    ).toEqual(['name_taken', 'points_threshold_taken']);
    expect((await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 }, token: other.token })).statusCode).toBe(201);
  });

  it('finds a customer by remote_id or e-mail, with balances', async () => {
    await t.request('PUT', `${API}/customers/8001`, { body: { email: 'Ada@Example.com' } });
    const byEmail = await t.request('GET', `${API}/customers/ada@example.com`);
    expect(byEmail.json().data).toMatchObject({ remote_id: 8001, email: 'Ada@Example.com', points_balance: 0, credits_balance: 0 });
  });
});
