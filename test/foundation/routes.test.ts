import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, revokeToken } from '../../src/shops/repository.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// The checks every /merchant_api/v1 route must pass (unkey's runCommonRouteTests). The list of
// routes comes from the app's own OpenAPI document, so a new route is covered the moment it is
// registered, and the OpenAPI test makes sure every route is in that document.

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface Route {
  method: Method;
  path: string;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

function apiRoutes(document: { paths: Record<string, Record<string, unknown>> }): Route[] {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith(API))
    .flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => METHODS.has(m))
        .map((m) => ({ method: m.toUpperCase() as Method, path })),
    );
}

/**
 * A concrete URL for a templated path; any value will do, auth comes before everything else. An
 * API token's id names none of the shop's: DELETE /api_tokens/1 would revoke the test's own.
 */
const concrete = (path: string) => path.replace('/api_tokens/{id}', '/api_tokens/999').replace(/\{[^}]+\}/g, '1');

describe(`every /merchant_api/v1 route (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let routes: Route[];
  let revoked: string;

  // The `it` blocks below share one context (database, shop, clock): they run in order.
  beforeAll(async () => {
    t = await setup();
    routes = apiRoutes((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
    const { token, row } = await createToken(t.database.db, t.shop.id, 'to revoke', t.clock.now);
    await revokeToken(t.database.db, t.shop.id, row.id, t.clock.now);
    revoked = token;
  });
  afterAll(() => t.close());

  const send = (route: Route, authorization: string | null): Promise<LightMyRequestResponse> =>
    t.app.inject({
      method: route.method,
      url: concrete(route.path),
      headers: authorization === null ? {} : { authorization },
      ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: {} }),
    });

  const expectUnauthorized = (route: Route, res: LightMyRequestResponse) => {
    expect(res.statusCode, `${route.method} ${route.path}`).toBe(401);
    const error = errorOf(res);
    expect(error).toMatchObject({ type: 'authentication_error', code: 'unauthorized' });
    expect(error.request_id).toBe(res.headers['x-request-id']);
  };

  it('finds the API routes in the app itself', () => {
    expect(routes).toContainEqual({ method: 'GET', path: `${API}/shop` });
    expect(routes).toContainEqual({ method: 'PATCH', path: `${API}/shop` });
    expect(routes.length).toBeGreaterThan(2);
  });

  it('answers 401 without an Authorization header', async () => {
    for (const route of routes) expectUnauthorized(route, await send(route, null));
  });

  it('answers 401 to an empty or malformed Authorization header', async () => {
    for (const route of routes) {
      expectUnauthorized(route, await send(route, ''));
      expectUnauthorized(route, await send(route, 'Bearer '));
      expectUnauthorized(route, await send(route, `Basic ${Buffer.from('user:pass').toString('base64')}`));
    }
  });

  it('answers 401 to an unknown token, in either header form', async () => {
    const unknown = `lty_${'x'.repeat(43)}`;
    for (const route of routes) {
      expectUnauthorized(route, await send(route, unknown));
      expectUnauthorized(route, await send(route, `Bearer ${unknown}`));
    }
  });

  it('answers 401 to a revoked token, in either header form', async () => {
    for (const route of routes) {
      expectUnauthorized(route, await send(route, revoked));
      expectUnauthorized(route, await send(route, `Bearer ${revoked}`));
    }
  });

  it('accepts a live token both bare and after Bearer (any case)', async () => {
    for (const route of routes) {
      for (const authorization of [t.token, `Bearer ${t.token}`, `bearer ${t.token}`]) {
        const res = await send(route, authorization);
        expect(res.statusCode, `${route.method} ${route.path} with "${authorization.slice(0, 10)}…"`).not.toBe(401);
        expect(res.statusCode, `${route.method} ${route.path}`).toBeLessThan(500);
      }
    }
  });
});

describe(`the shop a token belongs to (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { name: 'Shop A', points_expiry_days: 30 } });
  });
  afterAll(() => t.close());

  it("shows only the token's own shop", async () => {
    const b = await t.createShop({ name: 'Shop B', per_event_expiry: true });
    const mine = (await t.request('GET', `${API}/shop`)).json().data;
    const theirs = (await t.request('GET', `${API}/shop`, { token: b.token })).json().data;
    expect(mine).toMatchObject({ id: t.shop.id, name: 'Shop A', points_expiry_days: 30, per_event_expiry: false });
    expect(theirs).toMatchObject({ id: b.shop.id, name: 'Shop B', points_expiry_days: null, per_event_expiry: true });
  });

  it("changes only the token's own shop", async () => {
    const b = await t.createShop({ name: 'Shop B2' });
    const patched = await t.request('PATCH', `${API}/shop`, { token: b.token, body: { name: 'Renamed B2', points_expiry_days: 90 } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ id: b.shop.id, name: 'Renamed B2', points_expiry_days: 90 });
    const mine = (await t.request('GET', `${API}/shop`)).json().data;
    expect(mine).toMatchObject({ id: t.shop.id, name: 'Shop A', points_expiry_days: 30 });
  });

  it("keeps a shop's other tokens working when one is revoked", async () => {
    const second = await createToken(t.database.db, t.shop.id, 'second', t.clock.now);
    await revokeToken(t.database.db, t.shop.id, second.row.id, t.clock.now);
    expect((await t.request('GET', `${API}/shop`, { token: second.token })).statusCode).toBe(401);
    expect((await t.request('GET', `${API}/shop`)).statusCode).toBe(200);
  });
});
