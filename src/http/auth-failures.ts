import { AppError } from '../errors.js';

// Failed authentications per client address: an unknown token costs a database read, so past
// `max` of them in a window an address is answered 429 before any database work. Kept in this
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

  /** Throws 429 rate_limited when the address has failed `max` times in its current window. */
  check(address: string, now = performance.now()): void {
    const window = this.#windows.get(address);
    if (window === undefined || window.failures < this.max) return;
    if (now >= window.resetAt) {
      this.#windows.delete(address);
      return;
    }
    const seconds = Math.ceil((window.resetAt - now) / 1000);
    throw new AppError('rate_limited', this.message, {
      headers: { 'retry-after': String(seconds) },
    });
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
