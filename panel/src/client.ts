// The panel's contact with the storefront API: @loyalty-api/client's storefront client (typed
// calls, a key per redemption reused by its retries), with the customer token given and a new
// one from `token-url` fetched once when the one held is refused (it expired).
import { createStorefrontClient, type StorefrontClient } from '../../client/src/storefront.js';
import { LoyaltyApiError } from '../../client/src/errors.js';
import { WORDS as EARN_WORDS } from './ways-to-earn.js';

const WORDS: Record<string, string> = {
  insufficient_balance: 'You do not have enough points for this reward yet.',
  redemption_limit_reached: 'You have already redeemed this reward as many times as it allows.',
  reward_disabled: 'This reward is not available any more.',
  reward_out_of_codes: 'This reward has run out of codes. Please try again later.',
  rate_limited: 'Too many requests. Please wait a moment and try again.',
  unauthorized: 'Your session has expired. Please reload the page to sign in again.',
  unavailable: 'The loyalty service is busy. Please try again in a moment.',
  network: 'The loyalty service could not be reached. Check your connection and try again.',
  ...EARN_WORDS.errors,
};

/** A refusal in words a shopper understands; the API's own message when no better one is known. */
export function inWords(error: unknown): string {
  if (!(error instanceof LoyaltyApiError)) return WORDS.network!;
  if (error.code === 'network_error') return WORDS.network!;
  if (error.code === 'unexpected_response') return WORDS.unavailable!;
  return WORDS[error.code] ?? error.message;
}

export interface ClientOptions {
  apiBase: string;
  publishableKey: string;
  token: string | null;
  tokenUrl: string | null;
}

/** The merchant's token-url: a new customer token, asked for with the page's own cookies. */
async function fetchToken(tokenUrl: string): Promise<string> {
  const res = await fetch(tokenUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  const body = (await res.json().catch(() => null)) as { token?: unknown } | null;
  if (!res.ok || typeof body?.token !== 'string') throw new Error('token-url gave no token');
  return body.token;
}

/**
 * The typed storefront client, with the token given, else (or once it expires) one from
 * token-url. Few retries, short waits: a shopper is looking at the page.
 */
export function panelClient({ apiBase, publishableKey, token, tokenUrl }: ClientOptions): StorefrontClient {
  const given = token;
  const source =
    tokenUrl === null ? (given ?? undefined) : (refused: string | null) => (given !== null && refused === null ? Promise.resolve(given) : fetchToken(tokenUrl));
  return createStorefrontClient({ baseUrl: apiBase, publishableKey, token: source, retry: { attempts: 3, maxDelayMs: 5_000 } });
}
