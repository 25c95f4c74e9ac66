import { createApiClient, type ApiClient } from './core.js';
import type { TransportOptions } from './retry.js';
import type { paths } from './schema.js';

/** The storefront API's paths (`/storefront_api/v1/…`): all a shopper's client may call. */
export type StorefrontPaths = { [P in keyof paths as P extends `/storefront_api/${string}` ? P : never]: paths[P] };

/**
 * Where a customer token comes from when it is not a fixed string: called for the first
 * request that needs one, and again (with the token the server refused) when a token expires.
 * Calls that are refused together share one call of it.
 */
export type TokenSource = (refused: string | null) => Promise<string>;

export interface StorefrontClientOptions extends TransportOptions {
  /** The server's address, e.g. `https://loyalty.example.com` (paths carry /storefront_api/v1). */
  baseUrl: string;
  /** A storefront key's publishable key (`pk_…`): enough for `/programme`. */
  publishableKey: string;
  /**
   * A customer token (an HS256 JWT the merchant's backend signed), needed for `/me…`; or a
   * function that fetches one (from the merchant's backend), asked again once when the server
   * answers 401 to the token it gave: the request is then sent again with its same key.
   */
  token?: string | TokenSource;
}

export type StorefrontClient = ApiClient<StorefrontPaths>;

/** The token source failed: the call fails as the server fails a request without a token (401 `unauthorized`), not retried. */
function noToken(error: unknown): Response {
  const reason = error instanceof Error ? error.message : String(error);
  const body = { error: { code: 'unauthorized', message: `No customer token: ${reason}`, details: [] } };
  return new Response(JSON.stringify(body), { status: 401, headers: { 'content-type': 'application/json' } });
}

/** A transport that authenticates each attempt with the token source's current token, renewed once on a 401. */
function withTokenSource(source: TokenSource, send: NonNullable<TransportOptions['fetch']>): NonNullable<TransportOptions['fetch']> {
  let held: string | null = null;
  let fetching: Promise<string> | null = null;
  const fresh = (refused: string | null): Promise<string> => {
    if (held !== null && held !== refused) return Promise.resolve(held);
    fetching ??= source(refused)
      .then((token) => (held = token))
      .finally(() => {
        fetching = null;
      });
    return fetching;
  };
  const attempt = (input: string, init: RequestInit, token: string) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${token}`);
    return send(input, { ...init, headers });
  };
  return async (input, init) => {
    // Only the shopper's own account needs a customer token; /programme is the key's alone.
    if (!/\/storefront_api\/v1\/me(\/|\?|$)/.test(new URL(input).pathname)) return send(input, init);
    const token = await fresh(null).catch((error: unknown) => noToken(error));
    if (token instanceof Response) return token;
    const response = await attempt(input, init, token);
    if (response.status !== 401) return response;
    await response.body?.cancel();
    const renewed = await fresh(token).catch((error: unknown) => noToken(error));
    return renewed instanceof Response ? renewed : attempt(input, init, renewed);
  };
}

/**
 * A client of the storefront API, for a shopper's page or app: the same runtime as the
 * merchant client (typed calls, paginate(), a key per write reused by its retries, backoff),
 * authenticated by a publishable key and, for the shopper's own account, a customer token.
 */
export function createStorefrontClient({ publishableKey, token, ...options }: StorefrontClientOptions): StorefrontClient {
  const headers: Record<string, string> = { 'X-Publishable-Key': publishableKey };
  if (typeof token === 'string') headers.Authorization = `Bearer ${token}`;
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const transport = typeof token === 'function' ? { fetch: withTokenSource(token, send) } : {};
  return createApiClient<StorefrontPaths>({ ...options, ...transport, headers });
}
