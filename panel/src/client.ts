// The panel's contact with the storefront API: @loyalty-api/client's storefront client (typed
// calls, a key per redemption reused by its retries), with the customer token given and a new
// one from `token-url` fetched once when the one held is refused (it expired).
import { createStorefrontClient, type StorefrontClient } from '../../client/src/storefront.js';
import { LoyaltyApiError } from '../../client/src/errors.js';
import type { Key } from './i18n/index.js';

const ERROR_WORDS: Record<string, Key> = {
  insufficient_balance: 'err_insufficient',
  redemption_limit_reached: 'err_limit',
  reward_disabled: 'err_disabled',
  reward_out_of_codes: 'err_out_of_codes',
  birthday_already_set: 'err_birthday_set',
  validation_failed: 'err_invalid',
  invalid_parameter: 'err_invalid',
  rate_limited: 'err_rate',
  unauthorized: 'err_session',
  unavailable: 'err_busy',
  request_timeout: 'err_busy',
  internal_error: 'err_busy',
  network_error: 'err_network',
  unexpected_response: 'err_busy',
  limit_reached: 'err_way_limit',
  rule_not_found: 'err_way_gone',
};

/** A refusal in words a shopper understands, in their language; never the API's own text. */
export function inWords(error: unknown): Key {
  if (!(error instanceof LoyaltyApiError)) return 'err_network';
  return ERROR_WORDS[error.code] ?? 'err_other';
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
