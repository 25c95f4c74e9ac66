import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { AppError } from '../errors.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { customers } from '../records/resources/customers.js';
import type { Platform } from '../records/resources/connections.js';
import { raced, type Writer } from '../records/write.js';
import { afterSettled, applyIntent } from './apply.js';
import { Unappliable, type Intent, type Reading } from './intents.js';
import {
  connectionById,
  deliveryKnown,
  insertDelivery,
  settleDelivery,
  type ConnectionRow,
  type NewDelivery,
  type Outcome,
  withSavepoint,
} from './repository.js';
import { shopifyIntent } from './shopify.js';
import { validSignature } from './signature.js';
import { wooDedupeKey, wooIntent } from './woocommerce.js';

// A delivery from a connected store (docs/connections.md): authenticated by its signature over
// the raw body, recorded once per dedupe key, and applied in one transaction with its record.
// A payload that can never apply is kept as `failed` and answered 200 (a platform that gets
// errors for hours drops the subscription); a transient fault propagates (503, nothing kept).

export const DELIVERY_STATUSES = ['applied', 'duplicate', 'stale', 'ignored', 'deferred', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface IngestDeps {
  db: DB;
  clock: Clock;
  config: Config;
  /** The per-address limit on failed authentication, shared with the merchant API (http/auth-failures.ts). */
  failures: AuthFailures;
}

export interface Received {
  platform: Platform;
  id: number | null;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  ip: string;
}

interface Platformed {
  signature: string;
  topic: string;
  intent(topic: string, payload: unknown, reading: Reading): Intent;
  dedupeKey(headers: IncomingHttpHeaders, topic: string, payload: unknown): string | null;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
};

export const PLATFORM_HEADERS: Readonly<Record<Platform, Platformed>> = {
  shopify: {
    signature: 'x-shopify-hmac-sha256',
    topic: 'x-shopify-topic',
    intent: shopifyIntent,
    dedupeKey: (headers) => header(headers, 'x-shopify-event-id') ?? header(headers, 'x-shopify-webhook-id') ?? null,
  },
  woocommerce: {
    signature: 'x-wc-webhook-signature',
    topic: 'x-wc-webhook-topic',
    intent: wooIntent,
    dedupeKey: (_h, topic, payload) => wooDedupeKey(topic, payload),
  },
};

const badSignature = () =>
  new AppError('invalid_signature', 'The signature does not match this connection: check the ingest URL and the secret the connection was given');

/** WooCommerce's ping when a webhook is saved: a form body `webhook_id=N`, unsigned. */
const isWooPing = (r: Received) => r.platform === 'woocommerce' && /^webhook_id=\d+$/.test(r.raw.toString('latin1', 0, Math.min(r.raw.length, 64)));

/**
 * The connection a signed delivery is for; every other case is one and the same 401, counted
 * against the address (past the limit, 429). A valid signature is never refused: platforms send
 * many merchants' deliveries from shared addresses.
 */
async function authenticate(deps: IngestDeps, r: Received): Promise<ConnectionRow> {
  const connection = r.id === null ? undefined : await connectionById(deps.db, r.id);
  const signature = r.headers[PLATFORM_HEADERS[r.platform].signature];
  if (connection === undefined || connection.platform !== r.platform || !validSignature(connection.secret, r.raw, signature)) {
    deps.failures.check(r.ip);
    deps.failures.record(r.ip);
    throw badSignature();
  }
  if (connection.status === 'uninstalled')
    throw new AppError('connection_uninstalled', 'This connection was uninstalled from the store; create a new one to connect it again');
  if (connection.status === 'paused')
    throw new AppError('unavailable', 'This connection is paused; the platform retries later', { headers: { 'retry-after': '600' } });
  return connection;
}

export const readingOf = (c: ConnectionRow): Reading => ({
  earnOn: c.earn_on === 'total' ? 'total' : 'subtotal',
  acceptTestOrders: Number(c.accept_test_orders) === 1,
});

/** The body as kept: text, or null when it holds a NUL character no database column stores. */
const keptBody = (text: string): string | null => (text.includes('\u0000') ? null : text);

/** Why a write the API refused can never apply as sent; null when the error is not a refusal (a fault, a bug). */
export async function refusalOf(db: DB, shopId: number, error: unknown): Promise<string | null> {
  if (error instanceof Unappliable) return error.message;
  let refused = error;
  // A customer's e-mail taken by another writer at the same instant, reported as the check would.
  await raced(db, shopId, customers, error).catch((e: unknown) => (refused = e));
  if (!(refused instanceof AppError) || refused.status >= 500) return null;
  const details = (refused.details ?? []).map((d) => `${d.param}: ${d.message}`).join('; ');
  return details === '' || details === refused.message ? refused.message : `${refused.message} (${details})`;
}

/** The payload and what it asks for, or why it can never apply. */
function judge(r: Received, connection: ConnectionRow, topic: string, text: string): { payload: unknown; intent: Intent | Unappliable } {
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch (error) {
    return { payload: undefined, intent: new Unappliable(`the body is not JSON: ${(error as Error).message}`) };
  }
  try {
    return { payload, intent: PLATFORM_HEADERS[r.platform].intent(topic, payload, readingOf(connection)) };
  } catch (error) {
    if (error instanceof Unappliable) return { payload, intent: error };
    throw error;
  }
}

export const failedOutcome = (reason: string): Outcome => ({
  status: 'failed',
  error: reason.slice(0, 2000),
  resource: null,
  resourceId: null,
  customerRemoteId: null,
});

/** Receives a delivery: its status, as answered. */
export async function ingest(deps: IngestDeps, r: Received): Promise<DeliveryStatus> {
  if (isWooPing(r)) return 'ignored';
  const connection = await authenticate(deps, r);
  const spec = PLATFORM_HEADERS[r.platform];
  const topic = header(r.headers, spec.topic) ?? '';
  const w: Writer = { shopId: Number(connection.shop_id), now: deps.clock(), config: deps.config };
  // A key the headers carry (Shopify's event id) finds a copy before the body is read; a copy
  // that arrives at this same instant is caught by the unique key below.
  const early = spec.dedupeKey(r.headers, topic, undefined);
  if (early !== null && (await deliveryKnown(deps.db, w.shopId, Number(connection.id), early))) return 'duplicate';
  const text = r.raw.toString('utf8');
  const { payload, intent } =
    topic === '' ? { payload: undefined, intent: new Unappliable(`the ${spec.topic} header is missing`) } : judge(r, connection, topic, text);
  const dedupeKey = spec.dedupeKey(r.headers, topic, payload) ?? `sha256:${createHash('sha256').update(topic).update('\n').update(r.raw).digest('hex')}`;
  if (early === null && (await deliveryKnown(deps.db, w.shopId, Number(connection.id), dedupeKey))) return 'duplicate';
  const delivery = { connectionId: Number(connection.id), topic: topic || '(none)', dedupeKey, body: keptBody(text), bodyBytes: r.raw.length };
  if (intent instanceof Unappliable) return keepFailed(deps.db, w, delivery, intent.message);
  try {
    return await transaction(deps.db, async (trx) => {
      const id = await insertDelivery(trx, w.shopId, { ...delivery, status: 'applied' }, w.now);
      if (id === undefined) return 'duplicate';
      const outcome = await applyIntent(trx, w, delivery.connectionId, intent);
      await settleDelivery(trx, w.shopId, id, outcome, w.now);
      await afterSettled(trx, w.shopId, intent);
      return outcome.status as DeliveryStatus;
    });
  } catch (error) {
    const reason = await refusalOf(deps.db, w.shopId, error);
    if (reason === null) throw error;
    return keepFailed(deps.db, w, delivery, reason);
  }
}

/** Keeps a delivery that can never apply as `failed`, with its reason; a copy already kept is a duplicate. */
async function keepFailed(db: DB, w: Writer, delivery: Omit<NewDelivery, 'status'>, reason: string): Promise<DeliveryStatus> {
  return transaction(db, async (trx): Promise<DeliveryStatus> => {
    const id = await insertDelivery(trx, w.shopId, { ...delivery, status: 'failed' }, w.now);
    if (id === undefined) return 'duplicate';
    await settleDelivery(trx, w.shopId, id, failedOutcome(reason), w.now);
    return 'failed';
  });
}

/**
 * Applies a kept body again, by the same rules (stale, deferred, the mapping), in the caller's
 * transaction; what it wrote is undone when the API refuses it, and it is kept as failed.
 */
export async function replayDelivery(trx: DB, w: Writer, connection: ConnectionRow, row: { id: number; topic: string; body: string }): Promise<void> {
  const r: Received = { platform: connection.platform as Platform, id: Number(connection.id), headers: {}, raw: Buffer.alloc(0), ip: '' };
  const { intent } = judge(r, connection, row.topic, row.body);
  const id = Number(row.id);
  if (intent instanceof Unappliable) return settleDelivery(trx, w.shopId, id, failedOutcome(intent.message), w.now, true);
  try {
    await withSavepoint(trx, async () => {
      await settleDelivery(trx, w.shopId, id, await applyIntent(trx, w, Number(connection.id), intent), w.now, true);
      await afterSettled(trx, w.shopId, intent);
    });
  } catch (error) {
    const reason = await refusalOf(trx, w.shopId, error);
    if (reason === null) throw error;
    await settleDelivery(trx, w.shopId, id, failedOutcome(reason), w.now, true);
  }
}
