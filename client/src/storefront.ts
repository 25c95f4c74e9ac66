import { createApiClient, type ApiClient } from './core.js';
import type { TransportOptions } from './retry.js';
import type { paths } from './schema.js';

/** The storefront API's paths (`/storefront_api/v1/…`): all a shopper's client may call. */
export type StorefrontPaths = { [P in keyof paths as P extends `/storefront_api/${string}` ? P : never]: paths[P] };

export interface StorefrontClientOptions extends TransportOptions {
  /** The server's address, e.g. `https://loyalty.example.com` (paths carry /storefront_api/v1). */
  baseUrl: string;
  /** A storefront key's publishable key (`pk_…`): enough for `/programme`. */
  publishableKey: string;
  /** A customer token (an HS256 JWT the merchant's backend signed): needed for `/me…`. */
  token?: string;
}

export type StorefrontClient = ApiClient<StorefrontPaths>;

/**
 * A client of the storefront API, for a shopper's page or app: the same runtime as the
 * merchant client (typed calls, paginate(), a key per write reused by its retries, backoff),
 * authenticated by a publishable key and, for the shopper's own account, a customer token.
 */
export function createStorefrontClient({ publishableKey, token, ...options }: StorefrontClientOptions): StorefrontClient {
  const headers: Record<string, string> = { 'X-Publishable-Key': publishableKey };
  if (token !== undefined) headers.Authorization = `Bearer ${token}`;
  return createApiClient<StorefrontPaths>({ ...options, headers });
}
