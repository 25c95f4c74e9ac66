import type { Agent, fetch as undiciFetch } from 'undici';
import type { Clock } from '../clock.js';
import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { assertPublicAddress, ipLiteralOf, NonPublicAddressError, publicOnlyLookup } from './address-guard.js';
import { claimDueDeliveries, settleDelivery, webhookKey, type ClaimedDelivery, type DeliveryGroup, type Settlement } from './repository.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

// The delivery job: claims due deliveries, POSTs them, and records each attempt. A 2xx answer
// delivers; anything else (another status, a network error, a timeout) is retried with
// exponential backoff for about three days, then the delivery is marked failed.

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Whether the url may point at a private, loopback or otherwise non-public address (WEBHOOK_ALLOW_PRIVATE_URLS). */
  allowPrivateAddresses: boolean;
}

/** Sends one delivery; resolves with the receiver's status, rejects on a network error or timeout. */
export type WebhookTransport = (request: WebhookRequest) => Promise<{ status: number }>;

interface Undici {
  fetch: typeof undiciFetch;
  /** Connections of guarded deliveries resolve their host through publicOnlyLookup: the address checked is the address connected to, at every attempt. */
  publicOnly: Agent;
  anywhere: Agent;
}

/** undici, loaded for the first delivery: a server with no webhook to send never holds it (4 MB). */
let undici: Promise<Undici> | undefined;
const loadUndici = (): Promise<Undici> =>
  (undici ??= import('undici').then(({ Agent, fetch }) => ({
    fetch,
    publicOnly: new Agent({ connect: { lookup: publicOnlyLookup } }),
    anywhere: new Agent(),
  })));

/**
 * The production transport: fetch (undici), with a timeout. Redirects are not followed. Unless
 * the request allows private addresses, a host that is or resolves to a non-public address
 * is refused with NonPublicAddressError, before anything is sent.
 */
export const fetchTransport: WebhookTransport = async ({ url, headers, body, timeoutMs, allowPrivateAddresses }) => {
  if (!allowPrivateAddresses) {
    // Sockets do not look IP literals up; those are checked here.
    const literal = ipLiteralOf(new URL(url).hostname);
    if (literal !== null) assertPublicAddress(literal);
  }
  const { fetch, anywhere, publicOnly } = await loadUndici();
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
    dispatcher: allowPrivateAddresses ? anywhere : publicOnly,
  });
  // The receiver's body is of no use; cancelling frees the connection.
  await response.body?.cancel().catch(() => {});
  return { status: response.status };
};

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Wait before each retry: 1 min, 5 min, 30 min, 2 h, 5 h, 10 h, then 12 h; about 3 days in all. */
export const RETRY_DELAYS_MS: readonly number[] = [
  MINUTE,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  6 * HOUR,
];

/** The first attempt and every retry. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** A claim outlives the request's timeout by this much, so it never lapses while a send is running. */
const LEASE_MARGIN_MS = MINUTE;

/** Claims per run at most, so one run ends and shutdown need not wait long. */
const MAX_CLAIMS_PER_RUN = 200;

const USER_AGENT = 'Loyalty-Webhooks/1.0';

export interface DeliveryOptions {
  clock: Clock;
  transport: WebhookTransport;
  timeoutMs: number;
  /** Deliveries claimed and sent concurrently per batch. */
  batchSize: number;
  /** Sends to private and other non-public addresses too (WEBHOOK_ALLOW_PRIVATE_URLS); off by default. */
  allowPrivateAddresses?: boolean;
}

export interface DeliveryRun {
  delivered: number;
  retrying: number;
  failed: number;
}

/** The headers of a delivery; the signature's timestamp is the time of sending. */
export function deliveryHeaders(delivery: ClaimedDelivery, nowMs: number): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [SIGNATURE_HEADER]: signatureHeader(delivery.secret, Math.floor(nowMs / 1000), delivery.payload),
    'loyalty-delivery-id': String(delivery.id),
    'loyalty-event-id': delivery.event_id,
    'loyalty-topic': delivery.topic,
  };
}

function describe(error: unknown, timeoutMs: number): string {
  const refused = error instanceof NonPublicAddressError ? error : (error as { cause?: unknown })?.cause;
  if (refused instanceof NonPublicAddressError) return refused.message;
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const detail = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(error);
  return detail.slice(0, 500);
}

async function attempt(delivery: ClaimedDelivery, options: DeliveryOptions): Promise<Settlement> {
  const attemptedAt = options.clock();
  const started = performance.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    ({ status: statusCode } = await options.transport({
      url: delivery.url,
      headers: deliveryHeaders(delivery, attemptedAt),
      body: delivery.payload,
      timeoutMs: options.timeoutMs,
      allowPrivateAddresses: options.allowPrivateAddresses ?? false,
    }));
    if (statusCode < 200 || statusCode > 299) error = `the endpoint answered HTTP ${statusCode}`;
  } catch (caught) {
    error = describe(caught, options.timeoutMs);
  }
  const durationMs = Math.round(performance.now() - started);
  if (error === null) return { status: 'delivered', nextAttemptAt: null, attemptedAt, statusCode, error, durationMs };
  if (delivery.attempt >= MAX_ATTEMPTS) return { status: 'failed', nextAttemptAt: null, attemptedAt, statusCode, error, durationMs };
  const delay = RETRY_DELAYS_MS[delivery.attempt - 1]!;
  return { status: 'pending', nextAttemptAt: options.clock() + delay, attemptedAt, statusCode, error, durationMs };
}

/** Deliveries of one webhook sent at once, at most: a hanging endpoint holds no more of the slots. */
export function perWebhookLimit(batchSize: number): number {
  return Math.max(1, Math.ceil(batchSize / 4));
}

/** Where each process's next claim begins its scan of delivery groups (claimDueDeliveries). */
const cursors = new WeakMap<DB, DeliveryGroup | null>();

/**
 * Sends every due delivery (up to a bound per run), `batchSize` at a time: as soon as one send
 * ends, its slot is given to the next due delivery, so a slow or hanging endpoint delays nobody
 * else's; each webhook has at most perWebhookLimit of the slots, and claims serve webhooks and
 * topics in turns. Safe in several processes at once: a claim takes rows no other worker holds
 * (FOR UPDATE SKIP LOCKED on PostgreSQL) and leases them, so each delivery is sent by one
 * worker at a time.
 */
export async function deliverDueWebhooks(db: DB, options: DeliveryOptions): Promise<DeliveryRun> {
  const run: DeliveryRun = { delivered: 0, retrying: 0, failed: 0 };
  const busy = new Map<string, number>();
  const sending = new Set<Promise<void>>();
  // A settle that fails (the database went away) leaves its delivery leased: it is sent again
  // when the lease ends. The run goes on with the others and reports the first such error.
  let settleError: unknown = null;
  const send = async (delivery: ClaimedDelivery) => {
    const key = webhookKey(delivery);
    try {
      const outcome = await attempt(delivery, options);
      const kept = await transaction(db, (trx) => settleDelivery(trx, delivery, outcome, options.clock()));
      if (!kept) return;
      if (outcome.status === 'delivered') run.delivered++;
      else if (outcome.status === 'failed') run.failed++;
      else run.retrying++;
    } catch (error) {
      settleError ??= error;
    } finally {
      const left = busy.get(key)! - 1;
      if (left === 0) busy.delete(key);
      else busy.set(key, left);
    }
  };
  try {
    for (let claims = 0; claims < MAX_CLAIMS_PER_RUN; claims++) {
      const free = options.batchSize - sending.size;
      const now = options.clock();
      const limits = { limit: free, perWebhook: perWebhookLimit(options.batchSize), busy, after: cursors.get(db) ?? null };
      const claim = await transaction(db, (trx) => claimDueDeliveries(trx, now, now + options.timeoutMs + LEASE_MARGIN_MS, limits));
      cursors.set(db, claim.next);
      for (const delivery of claim.deliveries) {
        busy.set(webhookKey(delivery), (busy.get(webhookKey(delivery)) ?? 0) + 1);
        const sent: Promise<void> = send(delivery).finally(() => sending.delete(sent));
        sending.add(sent);
      }
      // Every slot taken, or the scan of groups has reached their end: wait for a send to end,
      // which frees a slot (and maybe its webhook's share). Nothing sent and nothing found: done.
      if (sending.size >= options.batchSize || (claim.next === null && sending.size > 0)) await Promise.race(sending);
      else if (claim.next === null) break;
    }
  } finally {
    await Promise.all(sending);
  }
  if (settleError !== null) throw settleError;
  return run;
}
