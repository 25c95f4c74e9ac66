import { createLoyaltyClient, type LoyaltyClient } from '@loyalty-api/client';

// The token lives in sessionStorage only: it goes with the tab, never into localStorage,
// a cookie or a URL the server sees.

const KEY = 'loyalty.console.token';

export const readToken = (): string | null => sessionStorage.getItem(KEY);
export const storeToken = (token: string): void => sessionStorage.setItem(KEY, token);
export const forgetToken = (): void => sessionStorage.removeItem(KEY);

/**
 * A token handed over in the address's fragment (`/console/#token=…`, what `loyalty
 * console-link` prints): taken out of the address at once so it stays out of the history.
 */
export function takeTokenFromFragment(): string | null {
  const match = /^#token=([^&]+)/.exec(window.location.hash);
  if (!match?.[1]) return null;
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}#/`);
  return decodeURIComponent(match[1]);
}

/** A client of this server's API (the console is served by the API process itself). */
export const clientFor = (token: string): LoyaltyClient => createLoyaltyClient({ baseUrl: window.location.origin, token });
