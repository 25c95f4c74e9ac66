import { createApiClient, type ApiClient } from './core.js';
import type { TransportOptions } from './retry.js';
import type { paths } from './schema.js';

export interface LoyaltyClientOptions extends TransportOptions {
  /** The server's address, e.g. `https://loyalty.example.com` (paths carry /merchant_api/v1). */
  baseUrl: string;
  /** A shop API token (`lty_…`). */
  token: string;
}

export type LoyaltyClient = ApiClient<paths>;

/** A client of the merchant API, authenticated by a shop's token. */
export function createLoyaltyClient({ token, ...options }: LoyaltyClientOptions): LoyaltyClient {
  return createApiClient<paths>({ ...options, headers: { Authorization: `Bearer ${token}` } });
}
