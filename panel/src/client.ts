// The panel's only contact with the storefront API: fetch, with the customer token, and a new
// token from `token-url` fetched once when the one held is refused (it expired). Kept to what
// the panel needs; a page may equally use @loyalty-api/client's createStorefrontClient.

export class PanelError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const WORDS: Record<string, string> = {
  insufficient_balance: 'You do not have enough points for this reward yet.',
  redemption_limit_reached: 'You have already redeemed this reward as many times as it allows.',
  reward_disabled: 'This reward is not available any more.',
  reward_out_of_codes: 'This reward has run out of codes. Please try again later.',
  rate_limited: 'Too many requests. Please wait a moment and try again.',
  unauthorized: 'Your session has expired. Please reload the page to sign in again.',
  unavailable: 'The loyalty service is busy. Please try again in a moment.',
  network: 'The loyalty service could not be reached. Check your connection and try again.',
};

/** A refusal in words a shopper understands; the API's own message when no better one is known. */
export function inWords(error: unknown): string {
  if (error instanceof PanelError) return WORDS[error.code] ?? error.message;
  return WORDS.network!;
}

export interface ClientOptions {
  apiBase: string;
  publishableKey: string;
  token: string | null;
  tokenUrl: string | null;
}

export class StorefrontClient {
  #token: string | null;
  /** The token being fetched from token-url: requests refused together share one fetch. */
  #fetching: Promise<string> | null = null;

  constructor(readonly options: ClientOptions) {
    this.#token = options.token;
  }

  /** A new token, unless `refused` is no longer the one held (another request replaced it meanwhile). */
  #freshToken(refused: string | null): Promise<string> {
    if (this.#token !== null && this.#token !== refused) return Promise.resolve(this.#token);
    this.#fetching ??= this.#fetchToken().finally(() => {
      this.#fetching = null;
    });
    return this.#fetching;
  }

  async #fetchToken(): Promise<string> {
    if (this.options.tokenUrl === null) throw new PanelError('No token', 'unauthorized');
    let res: Response;
    try {
      res = await fetch(this.options.tokenUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } });
    } catch {
      throw new PanelError('token-url unreachable', 'network');
    }
    const body = (await res.json().catch(() => null)) as { token?: unknown } | null;
    if (!res.ok || typeof body?.token !== 'string') throw new PanelError('token-url gave no token', 'unauthorized');
    this.#token = body.token;
    return body.token;
  }

  async #send(method: string, path: string, body: unknown, idempotencyKey: string | undefined, token: string): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    try {
      return await fetch(`${this.options.apiBase}/storefront_api/v1${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new PanelError('network error', 'network');
    }
  }

  /** The shop's public programme (GET /programme, by the publishable key: no customer). */
  async programme<T>(): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.options.apiBase}/storefront_api/v1/programme`, { headers: { 'x-publishable-key': this.options.publishableKey } });
    } catch {
      throw new PanelError('network error', 'network');
    }
    const json = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
    if (!res.ok) throw new PanelError(json?.error?.message ?? `HTTP ${res.status}`, json?.error?.code ?? 'unavailable');
    return json as T;
  }

  /** Answers the API's `data` (and `links`), or throws a PanelError with its code. */
  async request<T>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
    const token = this.#token ?? (await this.#freshToken(null));
    let res = await this.#send(method, path, body, idempotencyKey, token);
    // The token expired: one new one from token-url, and the request once more (same key).
    if (res.status === 401 && this.options.tokenUrl !== null) res = await this.#send(method, path, body, idempotencyKey, await this.#freshToken(token));
    const json = (await res.json().catch(() => null)) as { data?: unknown; error?: { code?: string; message?: string } } | null;
    if (!res.ok) throw new PanelError(json?.error?.message ?? `HTTP ${res.status}`, json?.error?.code ?? 'unavailable');
    return json as T;
  }
}
