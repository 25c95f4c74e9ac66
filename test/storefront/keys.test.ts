import { decodeProtectedHeader, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers } from '../ledger/fixtures.js';
import { asCustomer, createKey, customerToken, STOREFRONT } from './fixtures.js';

// Storefront keys over the merchant API, minted tokens, the public programme, CORS for exactly
// each key's origins, and the limits per customer and per address. The `it` blocks of each
// describe share one shop and one clock, in order.

const SHOP = 'https://shop.example';

describe(`storefront keys (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 1);
  });
  afterAll(() => t.close());

  it('creates keys with their secret shown once, lists them without it, changes origins, revokes', async () => {
    const created = await t.request('POST', `${API}/storefront_keys`, { body: { allowed_origins: [SHOP] } });
    expect(created.statusCode).toBe(201);
    const key = created.json().data;
    expect(key).toEqual({
      id: expect.any(Number),
      publishable_key: expect.stringMatching(/^pk_[\w-]{24}$/),
      secret: expect.stringMatching(/^sks_[\w-]{43}$/),
      allowed_origins: [SHOP],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const second = await createKey(t);
    const list = (await t.request('GET', `${API}/storefront_keys`)).json();
    expect(list.data.map((k: { id: number }) => k.id)).toEqual([key.id, second.id]);
    expect(JSON.stringify(list)).not.toContain('sks_');

    const patched = await t.request('PATCH', `${API}/storefront_keys/${key.id}`, { body: { allowed_origins: ['http://localhost:8080', SHOP] } });
    expect(patched.json().data).toMatchObject({ id: key.id, allowed_origins: ['http://localhost:8080', SHOP] });
    expect(patched.body).not.toContain('sks_');

    const bad = await t.request('POST', `${API}/storefront_keys`, { body: { allowed_origins: ['https://shop.example/path', 'ftp://x'] } });
    expect(bad.statusCode).toBe(422);
    expect(
      errorOf(bad)
        .details!.map((d) => d.param)
        .sort(),
    ).toEqual(['allowed_origins[0]', 'allowed_origins[1]']);

    expect((await t.request('DELETE', `${API}/storefront_keys/${second.id}`)).json().data).toEqual({ id: second.id, deleted: true });
    expect((await t.request('DELETE', `${API}/storefront_keys/${second.id}`)).statusCode).toBe(404);
    const other = await t.createShop({ name: 'Other' });
    expect((await t.request('PATCH', `${API}/storefront_keys/${key.id}`, { token: other.token, body: { allowed_origins: [] } })).statusCode).toBe(404);
  });

  it('mints a customer token with the newest key, that the storefront accepts', async () => {
    const newest = await createKey(t);
    const res = await t.request('POST', `${API}/customers/customer1@example.com/storefront_tokens`, { body: { ttl_seconds: 600 } });
    expect(res.statusCode, res.body).toBe(201);
    const { token, expires_at } = res.json().data;
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT', kid: newest.publishable_key });
    expect(decodeJwt(token)).toMatchObject({ sub: '1', exp: Math.floor(t.clock.now / 1000) + 600 });
    expect(expires_at).toBe(new Date(t.clock.now + 600_000).toISOString());
    expect((await asCustomer(t, 'GET', '/me', token)).json().data.remote_id).toBe(1);
    expect((await t.request('POST', `${API}/customers/999/storefront_tokens`)).statusCode).toBe(404);
    expect((await t.request('POST', `${API}/customers/1/storefront_tokens`, { body: { ttl_seconds: 86_401 } })).statusCode).toBe(422);
  });
});

describe(`the public programme and CORS (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { storefront: { customerMax: 5, addressMax: 1000, windowMs: 60_000 } } });
    await createCustomers(t, 3);
    await t.request('POST', `${API}/earning_rules`, { body: { kind: 'signup', points_amount: 100 } });
    await t.request('POST', `${API}/rewards`, { body: { name: 'Tote', kind: 'free_product', value: 12, points_price: 400 } });
    await t.request('POST', `${API}/rewards`, { body: { name: 'Hidden', kind: 'free_shipping', points_price: 1, enabled: false } });
  });
  afterAll(() => t.close());

  it('shows the enabled programme by publishable key, with an ETag and a minute of caching', async () => {
    const key = await createKey(t);
    const res = await t.app.inject({ method: 'GET', url: `${STOREFRONT}/programme`, headers: { 'x-publishable-key': key.publishable_key } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      shop: { name: 'Test shop', currency: null },
      earning_rules: [
        { kind: 'signup', points_per_unit: null, unit_amount: null, min_order_total: null, currency: null, points_amount: 100, credits_amount: null },
      ],
      rewards: [{ id: expect.any(Number), name: 'Tote', kind: 'free_product', value: 12, points_price: 400 }],
      vip_tiers: [],
      ways_to_earn: [],
      campaigns: [],
    });
    expect(res.headers['cache-control']).toBe('public, max-age=60');
    const again = await t.app.inject({
      method: 'GET',
      url: `${STOREFRONT}/programme`,
      headers: { 'x-publishable-key': key.publishable_key, 'if-none-match': String(res.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    for (const headers of [{}, { 'x-publishable-key': 'pk_nope' }, { authorization: `Bearer ${t.token}` }]) {
      expect((await t.app.inject({ method: 'GET', url: `${STOREFRONT}/programme`, headers })).statusCode).toBe(401);
    }
  });

  it('shows the campaigns running now and later, soonest first, with what a shopper earns by them and nothing internal', async () => {
    const key = await createKey(t);
    const iso = (ms: number) => new Date(ms).toISOString();
    const now = t.clock.now;
    const HOUR = 3_600_000;
    const gold = (await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 } })).json().data.id;
    const campaign = async (body: Record<string, unknown>) => {
      const res = await t.request('POST', `${API}/campaigns`, { body });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as number;
    };
    await campaign({ name: 'Ended', multiplier: 2, starts_at: iso(now - 5 * HOUR), ends_at: iso(now - HOUR) });
    const cancelled = await campaign({ name: 'Cancelled', bonus_points: 10, starts_at: iso(now - HOUR), ends_at: iso(now + HOUR) });
    expect((await t.request('POST', `${API}/campaigns/${cancelled}/cancel`)).statusCode).toBe(200);
    await campaign({
      name: 'Gold weekend',
      multiplier: 1.5,
      bonus_points: 20,
      vip_tier_ids: [gold],
      starts_at: iso(now + 2 * HOUR),
      ends_at: iso(now + 50 * HOUR),
    });
    await campaign({ name: 'Double points', multiplier: 2, starts_at: iso(now - HOUR), ends_at: iso(now + 3 * HOUR) });
    const programme = () => t.app.inject({ method: 'GET', url: `${STOREFRONT}/programme`, headers: { 'x-publishable-key': key.publishable_key } });
    const res = await programme();
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.campaigns).toEqual([
      {
        name: 'Double points',
        status: 'active',
        starts_at: iso(now - HOUR),
        ends_at: iso(now + 3 * HOUR),
        multiplier: 2,
        bonus_points: null,
        vip_tier_ids: [],
      },
      {
        name: 'Gold weekend',
        status: 'scheduled',
        starts_at: iso(now + 2 * HOUR),
        ends_at: iso(now + 50 * HOUR),
        multiplier: 1.5,
        bonus_points: 20,
        vip_tier_ids: [gold],
      },
    ]);
    // Once the first ends and the second starts, the answer (and its ETag) says so.
    t.clock.now = now + 3 * HOUR;
    const later = await programme();
    expect(later.json().data.campaigns.map((c: { name: string; status: string }) => [c.name, c.status])).toEqual([['Gold weekend', 'active']]);
    expect(later.headers.etag).not.toBe(res.headers.etag);
    t.clock.now = now;
  });

  it("answers CORS, preflight included, for exactly the key's origins; merchant paths send none", async () => {
    const key = await createKey(t, [SHOP]);
    const other = await createKey(t, ['https://other.example']);
    const preflight = (origin: string) =>
      t.app.inject({
        method: 'OPTIONS',
        url: `${STOREFRONT}/me/points_events?pagination[limit]=5`,
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
    const allowed = await preflight(SHOP);
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(SHOP);
    expect(allowed.headers['access-control-allow-headers']).toContain('authorization');
    expect((await preflight('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();

    const token = await customerToken(t, key);
    const me = (origin: string, bearer = token) => asCustomer(t, 'GET', '/me', bearer, { headers: { origin } });
    expect((await me(SHOP)).headers['access-control-allow-origin']).toBe(SHOP);
    expect((await me(SHOP)).headers.vary).toContain('Origin');
    // Another key's origin is not this key's.
    expect((await me('https://other.example')).headers['access-control-allow-origin']).toBeUndefined();
    expect((await me('https://evil.example')).headers['access-control-allow-origin']).toBeUndefined();
    // A refused (expired) token is readable by the key's page, so it can fetch a new one.
    const expired = await me(SHOP, await customerToken(t, key, { iat: -3600, exp: -120 }));
    expect(expired.statusCode).toBe(401);
    expect(expired.headers['access-control-allow-origin']).toBe(SHOP);
    const programme = await t.app.inject({
      method: 'GET',
      url: `${STOREFRONT}/programme`,
      headers: { origin: 'https://other.example', 'x-publishable-key': other.publishable_key },
    });
    expect(programme.headers['access-control-allow-origin']).toBe('https://other.example');

    for (const res of [
      await t.request('GET', `${API}/shop`, { headers: { origin: SHOP } }),
      await t.app.inject({ method: 'OPTIONS', url: `${API}/shop`, headers: { origin: SHOP, 'access-control-request-method': 'GET' } }),
    ]) {
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });

  it("limits each customer's requests (429 with Retry-After), without limiting another customer", async () => {
    const key = await createKey(t);
    // Customer 1 made requests above; 2 and 3 none yet.
    const first = await customerToken(t, key, { sub: '2' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await asCustomer(t, 'GET', '/me', first)).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await asCustomer(t, 'GET', '/me', first);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    expect(errorOf(limited).code).toBe('rate_limited');
    expect((await asCustomer(t, 'GET', '/me', await customerToken(t, key, { sub: '3' }))).statusCode).toBe(200);
  });
});

describe(`the storefront's limit per client address (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { storefront: { customerMax: 1000, addressMax: 3, windowMs: 60_000 } } });
  });
  afterAll(() => t.close());

  it("answers 429 past the address's count, before looking at any key", async () => {
    const key = await createKey(t);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await t.app.inject({ method: 'GET', url: `${STOREFRONT}/programme`, headers: { 'x-publishable-key': key.publishable_key } })).statusCode);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const other = await t.app.inject({
      method: 'GET',
      url: `${STOREFRONT}/programme`,
      remoteAddress: '10.0.0.2',
      headers: { 'x-publishable-key': key.publishable_key },
    });
    expect(other.statusCode).toBe(200);
  });
});
