// Sending one logical request: a write gets an Idempotency-Key that all its attempts share, so
// a retry after a lost response replays the first answer instead of applying the write twice;
// 429, 503 and network failures are retried with capped exponential backoff that waits as
// long as the server's Retry-After says.

export interface RetryOptions {
  /** Attempts in all, the first included; 1 turns retries off. Default 4. */
  attempts?: number;
  /** The first wait without a Retry-After; each next one doubles it. Default 250 ms. */
  baseDelayMs?: number;
  /** The longest wait. A Retry-After beyond it is not waited for: the error is thrown. Default 30 s. */
  maxDelayMs?: number;
}

export interface TransportOptions {
  /** The fetch to send with (default: the global one). */
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
  retry?: RetryOptions;
  /** How to wait between attempts (tests pass a fake clock's). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRIED_STATUSES = new Set([429, 503]);

/** 128 random bits, as hex: unique per logical write. */
export function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Retry-After in milliseconds (seconds or an HTTP date), or undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Whether an attempt's outcome is worth another, and after how long; undefined when not. A 409
 * `idempotency_key_in_use` on a retry is our own earlier attempt still running: wait for it.
 */
async function nextDelay(outcome: Response | undefined, attempt: number, retry: Required<RetryOptions>): Promise<number | undefined> {
  if (attempt >= retry.attempts) return undefined;
  const backoff = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
  // Half fixed, half random: clients that failed together do not retry together.
  const jittered = backoff / 2 + (Math.random() * backoff) / 2;
  if (outcome === undefined) return jittered;
  if (outcome.status === 409 && attempt > 1) {
    const body = (await outcome
      .clone()
      .json()
      .catch(() => null)) as { error?: { code?: string } } | null;
    return body?.error?.code === 'idempotency_key_in_use' ? jittered : undefined;
  }
  if (!RETRIED_STATUSES.has(outcome.status)) return undefined;
  const asked = retryAfterMs(outcome.headers.get('retry-after'));
  if (asked === undefined) return jittered;
  return asked <= retry.maxDelayMs ? asked : undefined;
}

const READ_AFTER = 'loyalty-read-after';

/** A Loyalty-Read-After token's order: the server's WAL position `hi/lo` in hex; null when it is not one. */
function tokenOrder(token: string): bigint | null {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(token);
  return match === null ? null : (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/**
 * Read-your-writes across a server's processes and replicas: the newest Loyalty-Read-After a
 * write's answer gave, sent back by every later read (docs/scaling.md).
 */
function readAfterTokens(): { send(method: string, headers: Headers): void; seen(response: Response): void } {
  let newest: string | null = null;
  return {
    send(method, headers) {
      if (newest !== null && (method === 'GET' || method === 'HEAD') && !headers.has(READ_AFTER)) headers.set(READ_AFTER, newest);
    },
    seen(response) {
      const token = response.headers.get(READ_AFTER);
      if (token === null) return;
      const order = tokenOrder(token);
      const current = newest === null ? null : tokenOrder(newest);
      if (order === null || current === null || order > current) newest = token;
    },
  };
}

/** A fetch for openapi-fetch that gives writes their key, retries what is safe to retry, and sends back Loyalty-Read-After. */
export function retryingFetch(options: TransportOptions = {}): (request: Request) => Promise<Response> {
  const retry = { attempts: 4, baseDelayMs: 250, maxDelayMs: 30_000, ...options.retry };
  const sleep = options.sleep ?? abortableSleep;
  const tokens = readAfterTokens();
  return async (request) => {
    const send = options.fetch ?? globalThis.fetch;
    const headers = new Headers(request.headers);
    if (WRITES.has(request.method) && !headers.has('idempotency-key')) headers.set('idempotency-key', newIdempotencyKey());
    tokens.send(request.method, headers);
    // Read once, sent by every attempt.
    const body = request.body === null ? undefined : await request.arrayBuffer();
    for (let attempt = 1; ; attempt++) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await send(request.url, { method: request.method, headers, body, signal: request.signal, redirect: request.redirect });
      } catch (error) {
        if (request.signal.aborted) throw error;
        failure = error;
      }
      const delay = await nextDelay(response, attempt, retry);
      if (response !== undefined) tokens.seen(response);
      if (delay === undefined) {
        if (response !== undefined) return response;
        throw failure;
      }
      await response?.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}
