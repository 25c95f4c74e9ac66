import { AppError } from '../errors.js';

// Failed authentications per client address: an unknown token costs a database read, so past
// `max` of them in a window an address is answered 429 before any database work, unless the
// token it sends is live (http/known-tokens.ts): a valid token is never refused. Kept in this
// process: each API process limits on its own count.

/** Addresses remembered at once; past it the oldest window is forgotten. */
const MAX_ADDRESSES = 10_000;

interface Window {
  failures: number;
  resetAt: number;
}

export class AuthFailures {
  readonly #windows = new Map<string, Window>();

  /** Also counts other things per key (the storefront's requests per address and per customer), with their own message. */
  constructor(
    readonly max: number,
    readonly windowMs: number,
    readonly message = 'Too many requests with unknown or revoked API tokens from this address; retry after the time in Retry-After',
  ) {}

  /**
   * The 429 rate_limited for an address that has failed `max` times in its current window, to
   * throw unless the token it sends is known to be live (http/auth.ts); undefined otherwise.
   */
  refusal(address: string, now = performance.now()): AppError | undefined {
    const window = this.#windows.get(address);
    if (window === undefined || window.failures < this.max) return undefined;
    if (now >= window.resetAt) {
      this.#windows.delete(address);
      return undefined;
    }
    const seconds = Math.ceil((window.resetAt - now) / 1000);
    return new AppError('rate_limited', this.message, {
      headers: { 'retry-after': String(seconds) },
    });
  }

  /** Throws the address's refusal, if it has one (limits where no live token can be told apart). */
  check(address: string, now = performance.now()): void {
    const refusal = this.refusal(address, now);
    if (refusal !== undefined) throw refusal;
  }

  /** Counts one more for the address; returns its window as it now stands. */
  record(address: string, now = performance.now()): Readonly<Window> {
    let window = this.#windows.get(address);
    if (window === undefined || now >= window.resetAt) {
      this.#windows.delete(address);
      if (this.#windows.size >= MAX_ADDRESSES) this.#windows.delete(this.#windows.keys().next().value!);
      this.#windows.set(address, (window = { failures: 0, resetAt: now + this.windowMs }));
    }
    window.failures++;
    return window;
  }
}
