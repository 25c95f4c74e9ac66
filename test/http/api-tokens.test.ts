import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beyond } from '../../src/shops/scopes.js';
import { liveTokenHashes, listTokens, recordTokenUses } from '../../src/shops/repository.js';
import { hashToken } from '../../src/shops/tokens.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// /merchant_api/v1/api_tokens (docs/access.md): list, create (secret shown once, scopes at
// most the creator's), revoke; and tokens that expire, refused like unknown ones.

describe(`API tokens (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('creates a scoped token, shows its secret once, and lists it without', async () => {
    const created = await t.request('POST', `${API}/api_tokens`, { body: { name: 'storefront sync', scopes: ['customers:write', 'orders:write'] } });
    expect(created.statusCode).toBe(201);
    const data = created.json().data;
    expect(data).toMatchObject({ name: 'storefront sync', scopes: ['customers:write', 'orders:write'], expires_at: null, revoked_at: null });
    expect(data.token).toMatch(/^lty_/);
    expect(data.hint).toBe(`lty_…${data.token.slice(-4)}`);
    const list = await t.request('GET', `${API}/api_tokens`);
    expect(list.json().data.map((row: { name: string }) => row.name)).toEqual(['test', 'storefront sync']);
    expect(list.body).not.toContain(data.token);
    expect(list.json().data[0].scopes).toEqual(['admin']);
    expect((await t.request('PUT', `${API}/customers/5`, { token: data.token, body: { email: 'e@example.com' } })).statusCode).toBe(201);
    expect((await t.request('GET', `${API}/api_tokens`, { token: data.token })).statusCode).toBe(403);
    expect((await t.request('POST', `${API}/api_tokens`, { token: data.token, body: { name: 'x', scopes: ['read'] } })).statusCode).toBe(403);
  });

  it('refuses unknown scopes, none, and an expiry in the past', async () => {
    for (const body of [
      { name: 'x', scopes: ['everything'] },
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['read'], expires_at: new Date(t.clock.now - 1000).toISOString() },
    ]) {
      const res = await t.request('POST', `${API}/api_tokens`, { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
    }
  });

  it('gives no token more scopes than its creator holds', () => {
    expect(beyond(['read'], ['customers:read', 'read'])).toEqual([]);
    expect(beyond(['customers:write'], ['customers:read', 'orders:read', 'read'])).toEqual(['orders:read', 'read']);
    expect(beyond(['admin'], ['admin', 'read', 'shop:write'])).toEqual([]);
  });

  it('refuses an expired token like an unknown one, cached or not, and drops it from the known tokens', async () => {
    const expiresAt = new Date(t.clock.now + 3_600_000).toISOString();
    const data = (await t.request('POST', `${API}/api_tokens`, { body: { name: 'console', scopes: ['read'], expires_at: expiresAt } })).json().data;
    expect(data.expires_at).toBe(expiresAt);
    expect((await t.request('GET', `${API}/shop`, { token: data.token })).statusCode).toBe(200);
    expect(await liveTokenHashes(t.database.db, t.clock.now)).toContain(hashToken(data.token));
    t.clock.advance(3_600_000);
    // Still in the token cache: refused all the same.
    const refused = await t.request('GET', `${API}/shop`, { token: data.token });
    expect(refused.statusCode).toBe(401);
    expect(errorOf(refused)).toMatchObject({ code: 'unauthorized', message: 'The API token is unknown or has been revoked' });
    // The limit on unknown tokens per address (http/auth-failures.ts) counts it as unknown: the
    // set of live tokens it asks no longer holds it.
    expect(await liveTokenHashes(t.database.db, t.clock.now)).not.toContain(hashToken(data.token));
    expect((await t.request('GET', `${API}/shop`)).statusCode).toBe(200);
  });

  it('revokes a token: 401 from then on; 404 for a token the shop does not have', async () => {
    const data = (await t.request('POST', `${API}/api_tokens`, { body: { name: 'temp', scopes: ['read'] } })).json().data;
    const revoked = await t.request('DELETE', `${API}/api_tokens/${data.id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().data).toMatchObject({ id: data.id, revoked_at: expect.any(String) });
    expect((await t.request('GET', `${API}/shop`, { token: data.token })).statusCode).toBe(401);
    const other = await t.createShop();
    const theirs = (await t.request('GET', `${API}/api_tokens`, { token: other.token })).json().data[0];
    expect((await t.request('DELETE', `${API}/api_tokens/${theirs.id + 1000}`)).statusCode).toBe(404);
    const entries = (await t.request('GET', `${API}/audit_events`, { query: { resource: 'api_token', resource_id: String(data.id) } })).json().data;
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['api_token.created', 'api_token.revoked']);
    expect(entries[1].changes.revoked_at).toEqual([null, expect.any(String)]);
  });

  it('shows when a token last authenticated a request, and never moves that time back', async () => {
    const data = (await t.request('POST', `${API}/api_tokens`, { body: { name: 'usage', scopes: ['read'] } })).json().data;
    const listed = async () => (await t.request('GET', `${API}/api_tokens`)).json().data.find((row: { id: number }) => row.id === data.id);
    expect((await listed()).last_used_at).toBeNull();
    t.clock.advance(5_000);
    const usedAt = t.clock.now;
    expect((await t.request('GET', `${API}/shop`, { token: data.token })).statusCode).toBe(200);
    t.clock.advance(5_000);
    // The listing token's own use is written too, at the time of this request.
    const list = (await t.request('GET', `${API}/api_tokens`)).json().data;
    expect(list.find((row: { id: number }) => row.id === data.id).last_used_at).toBe(new Date(usedAt).toISOString());
    expect(list.find((row: { name: string }) => row.name === 'test').last_used_at).toBe(new Date(t.clock.now).toISOString());
    // A process that noted an older use (another worker) writes it without moving the time back.
    await recordTokenUses(t.database.db, new Map([[data.id, usedAt - 60_000]]));
    const row = (await listTokens(t.database.db, t.shop.id)).find((r) => r.id === data.id)!;
    expect(row.last_used_at).toBe(usedAt);
  });
});
