import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// On PostgreSQL a GET handler makes all its queries on one connection, taken once: under load a
// request that waited in the line for each of its queries waited several times over.

describe('HEAD of a read endpoint', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(async () => t?.close());

  it.each(['customers', 'customers?pagination[limit]=2', 'points_events', 'shop', 'redemptions'])('answers %s as GET does, without a body', async (path) => {
    const get = await t.request('GET', `${API}/${path}`);
    const head = await t.request('HEAD', `${API}/${path}`);
    expect([head.statusCode, head.body]).toEqual([200, '']);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
  });
});

describe.runIf(TEST_DIALECT === 'postgres')('one connection per read request (postgres)', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    expect((await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Silver', points_threshold: 100 } })).statusCode).toBe(201);
    for (const id of [1, 2, 3]) expect((await t.request('PUT', `${API}/customers/${id}`, { body: { email: `c${id}@example.com` } })).statusCode).toBe(201);
    const grant = await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '2', source: 'order', points_amount: 150 } });
    expect(grant.statusCode).toBe(201);
  });
  afterAll(async () => t?.close());
  afterEach(() => vi.restoreAllMocks());

  it.each([
    // rows, then the tiers they show
    ['a cursor page of customers', `${API}/customers?pagination[since_id]=0&pagination[limit]=2`, '"name":"Silver"'],
    // page keys, rows, the stored total, tiers
    ['an offset page of customers', `${API}/customers?pagination[page]=1&pagination[per_page]=2`, '"name":"Silver"'],
    // the customer, then the page
    ["a customer's points events", `${API}/customers/2/points_events`, '"points_amount":150'],
    ['a customer', `${API}/customers/2`, '"name":"Silver"'],
  ])('%s waits for a connection once', async (_name, url, shows) => {
    // The token is looked up now, so that the request measured finds it in the cache.
    expect((await t.request('GET', `${API}/shop`)).statusCode).toBe(200);
    const connects = vi.spyOn(pg.Pool.prototype, 'connect');
    const res = await t.request('GET', url);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(shows);
    expect(connects).toHaveBeenCalledTimes(1);
  });

  it('a preview of what an order would earn (a POST that writes nothing) waits for a connection once', async () => {
    expect((await t.request('GET', `${API}/shop`)).statusCode).toBe(200);
    const connects = vi.spyOn(pg.Pool.prototype, 'connect');
    // the customer, the earning rule, the tiers, the shop
    const res = await t.request('POST', `${API}/earning_rules/preview`, { body: { customer_identifier: '2', total: 10, currency: 'EUR' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ multiplier: 1 });
    expect(connects).toHaveBeenCalledTimes(1);
  });
});
