import { SignJWT } from 'jose';
import type { LightMyRequestResponse } from 'fastify';
import { API, type TestContext } from '../helpers/app.js';

// Storefront keys and customer tokens, made as a merchant's backend makes them: the key over
// the merchant API, the token signed with jose and the key's secret, no API call.

export const STOREFRONT = '/storefront_api/v1';

export interface TestKey {
  id: number;
  publishable_key: string;
  secret: string;
}

export async function createKey(t: TestContext, origins: string[] = [], token?: string): Promise<TestKey> {
  const res = await t.request('POST', `${API}/storefront_keys`, { body: { allowed_origins: origins }, ...(token ? { token } : {}) });
  if (res.statusCode !== 201) throw new Error(`storefront key: ${res.body}`);
  return res.json().data;
}

export interface TokenOptions {
  sub?: string;
  /** Seconds from the clock's now; undefined leaves the claim out (null) or uses the default. */
  iat?: number | null;
  exp?: number | null;
  nbf?: number;
  alg?: string;
  kid?: string;
  secret?: string;
}

/** A customer token for `sub` signed with the key's secret, iat now and exp in an hour unless told otherwise. */
export async function customerToken(t: TestContext, key: TestKey, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(t.clock.now / 1000);
  const claims: Record<string, unknown> = { sub: options.sub ?? '1' };
  if (options.iat !== null) claims.iat = now + (options.iat ?? 0);
  if (options.exp !== null) claims.exp = now + (options.exp ?? 3600);
  if (options.nbf !== undefined) claims.nbf = now + options.nbf;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT', kid: options.kid ?? key.publishable_key })
    .sign(new TextEncoder().encode(options.secret ?? key.secret));
}

/** A storefront request with a customer token (or none). */
export function asCustomer(
  t: TestContext,
  method: 'GET' | 'POST' | 'PUT',
  path: string,
  token: string | null,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url: `${STOREFRONT}${path}`,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers },
    ...(options.body !== undefined ? { payload: options.body as object } : {}),
  });
}
