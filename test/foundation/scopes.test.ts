import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/shops/repository.js';
import type { RouteScope, Scope } from '../../src/shops/scopes.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// Scopes (docs/access.md), generated from the app's own OpenAPI document as the routes
// test is: every operation declares the scope it needs, a token without it answers 403
// insufficient_scope naming it before anything is written, and a token with it gets past auth.

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface Operation {
  method: Method;
  path: string;
  scope: RouteScope;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/** The only operations that need `admin`: a route that declares no scope needs it too, and shows up here. */
const ADMIN_ONLY = ['GET /api_tokens', 'POST /api_tokens', 'DELETE /api_tokens/{id}', 'GET /audit_events'];

function operations(document: { paths: Record<string, Record<string, { security?: Record<string, string[]>[] }>> }): Operation[] {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith(API))
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([m]) => METHODS.has(m))
        .map(([m, op]) => {
          const security = op.security ?? [];
          expect(security, `${m} ${path}`).toHaveLength(2);
          expect(security[0]!.bearerAuth, `${m} ${path}`).toEqual(security[1]!.tokenAuth);
          return { method: m.toUpperCase() as Method, path, scope: security[0]!.bearerAuth![0] as RouteScope };
        }),
    );
}

/** Scopes that do not cover `needed`. */
function lacking(needed: RouteScope): Scope[] {
  if (needed === 'admin') return ['read', 'customers:write'];
  const resource = needed.slice(0, needed.indexOf(':'));
  const other = resource === 'shop' ? 'customers' : 'shop';
  // A read is refused to a token that writes another resource; a write, to one that reads everything.
  return needed.endsWith(':read') ? [`${other}:write` as Scope] : ['read', `${other}:write` as Scope];
}

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');

describe(`scopes of every /merchant_api/v1 operation (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let ops: Operation[];

  beforeAll(async () => {
    t = await setup();
    ops = operations((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json());
  });
  afterAll(() => t.close());

  const send = async (op: Operation, scopes: Scope[]): Promise<LightMyRequestResponse> => {
    const { token } = await createToken(t.database.db, t.shop.id, 'scoped', t.clock.now, { scopes });
    return t.app.inject({
      method: op.method,
      url: concrete(op.path),
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': `k-${op.method}-${op.path}` },
      ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { payload: {} }),
    });
  };

  const audited = async () => (await t.request('GET', `${API}/audit_events`, { query: { 'pagination[limit]': '250' } })).json().data.length;

  it('finds a scope declared on every operation; only the token and audit routes need admin', () => {
    expect(ops.length).toBeGreaterThan(60);
    const admin = ops.filter((op) => op.scope === 'admin').map((op) => `${op.method} ${op.path.slice(API.length)}`);
    expect(admin.sort()).toEqual([...ADMIN_ONLY].sort());
    for (const op of ops)
      if (op.method !== 'GET' && op.scope !== 'admin' && op.path !== `${API}/earning_rules/preview`)
        expect(op.scope, `${op.method} ${op.path}`).toMatch(/:write$/);
  });

  it('answers 403 insufficient_scope naming the scope to a token without it, before writing anything', async () => {
    const before = await audited();
    for (const op of ops) {
      const res = await send(op, lacking(op.scope));
      expect(res.statusCode, `${op.method} ${op.path}`).toBe(403);
      const error = errorOf(res);
      expect(error).toMatchObject({ type: 'permission_error', code: 'insufficient_scope' });
      expect(error.message).toContain(op.scope);
      expect(error.request_id).toBe(res.headers['x-request-id']);
    }
    expect(await audited()).toBe(before);
    // The idempotency keys of the refused writes are still free: nothing was stored under them.
    const write = ops.find((op) => op.method === 'PATCH' && op.path === `${API}/shop`)!;
    const retried = await send(write, ['shop:write']);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('lets a token holding the scope past the check, and `read` past every GET but the admin ones', async () => {
    for (const op of ops) {
      const res = await send(op, [op.scope]);
      expect(res.statusCode, `${op.method} ${op.path}`).not.toBe(403);
      expect(res.statusCode, `${op.method} ${op.path}`).toBeLessThan(500);
      if (op.method === 'GET') expect((await send(op, ['read'])).statusCode, `GET ${op.path}`).toBe(op.scope === 'admin' ? 403 : res.statusCode);
    }
  });

  it('lets a write scope read its resource, and admin do everything', async () => {
    const { token } = await createToken(t.database.db, t.shop.id, 'rewards', t.clock.now, { scopes: ['rewards:write'] });
    expect((await t.request('GET', `${API}/rewards`, { token })).statusCode).toBe(200);
    expect((await t.request('GET', `${API}/customers`, { token })).statusCode).toBe(403);
    // The shop's first token was revoked above (DELETE /api_tokens/1 with admin): a new one.
    const admin = await createToken(t.database.db, t.shop.id, 'admin', t.clock.now);
    expect((await t.request('GET', `${API}/audit_events`, { token: admin.token })).statusCode).toBe(200);
    expect((await t.request('GET', `${API}/customers`, { token: admin.token })).statusCode).toBe(200);
  });
});
