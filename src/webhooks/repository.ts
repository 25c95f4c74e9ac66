import { sql, type Selectable } from 'kysely';
import { claimRows } from '../db/dialect.js';
import type { DB, DeliveryStatus, WebhookAttemptsTable, WebhookDeliveriesTable } from '../db/tables.js';
import { pushTo } from '../core/maps.js';

// The SQL of the webhook outbox. Every function takes the database handle first (the caller
// owns the transaction); the job's claim and prune work across shops, everything else is
// scoped to one.

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** A delivery claimed for sending, with where to send it and how to sign it. */
export interface ClaimedDelivery {
  shop_id: number;
  id: number;
  event_id: string;
  topic: string;
  payload: string;
  /** The number of this attempt (1 for the first). */
  attempt: number;
  url: string;
  secret: string;
}

// Partial indexes are used only when the query names the same literal (SQLite).
const PENDING = sql.lit('pending');

/**
 * Claims up to `limit` due deliveries, oldest due first: each is leased until `leaseUntil`
 * (its next_attempt_at moves there) and its attempt is counted, so no other worker sends it
 * meanwhile and a worker that dies mid-send only delays it. Deliveries of deleted webhooks
 * are gone (ON DELETE CASCADE); the join also reads the webhook's current url and secret.
 */
export async function claimDueDeliveries(trx: DB, now: number, limit: number, leaseUntil: number): Promise<ClaimedDelivery[]> {
  const query = trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', (join) => join.onRef('w.shop_id', '=', 'd.shop_id').onRef('w.id', '=', 'd.webhook_id'))
    .select(['d.shop_id', 'd.id', 'd.event_id', 'd.topic', 'd.payload', 'd.attempt_count', 'w.url', 'w.secret'])
    .where('d.status', '=', PENDING as never)
    .where('d.next_attempt_at', '<=', now)
    .orderBy('d.next_attempt_at')
    .orderBy('d.shop_id')
    .orderBy('d.id')
    .limit(limit);
  const rows = await claimRows(trx, query, 'd').execute();
  const byShop = new Map<number, number[]>();
  for (const row of rows) pushTo(byShop, Number(row.shop_id), Number(row.id));
  for (const [shopId, ids] of byShop) {
    await trx
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: leaseUntil, attempt_count: sql`attempt_count + 1`, last_attempt_at: now })
      .where('shop_id', '=', shopId)
      .where('id', 'in', ids)
      .execute();
  }
  return rows.map((row) => ({
    shop_id: Number(row.shop_id),
    id: Number(row.id),
    event_id: row.event_id,
    topic: row.topic,
    payload: row.payload,
    attempt: Number(row.attempt_count) + 1,
    url: row.url,
    secret: row.secret,
  }));
}

export interface Settlement {
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  attemptedAt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records the outcome of an attempt: the delivery's new state and one attempt row. Returns
 * false when the delivery is gone (its webhook was deleted while it was being sent).
 */
export async function settleDelivery(trx: DB, delivery: ClaimedDelivery, s: Settlement, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({
      status: s.status,
      next_attempt_at: s.nextAttemptAt,
      last_status_code: s.statusCode,
      last_error: s.error,
      ...(s.status === 'delivered' ? { delivered_at: now } : {}),
      updated_at: now,
    })
    .where('shop_id', '=', delivery.shop_id)
    .where('id', '=', delivery.id)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await trx
    .insertInto('webhook_attempts')
    .values({
      shop_id: delivery.shop_id,
      delivery_id: delivery.id,
      attempt: delivery.attempt,
      attempted_at: s.attemptedAt,
      status_code: s.statusCode,
      error: s.error,
      duration_ms: s.durationMs,
    })
    // A manual retry may race an automatic attempt of the same number; the first one stays.
    .onConflict((oc) => oc.doNothing())
    .execute();
  return true;
}

/** A webhook's deliveries, unordered: the list endpoint pages it. */
export function deliveriesQuery(db: DB, shopId: number, webhookId: number) {
  return db.selectFrom('webhook_deliveries').selectAll().where('shop_id', '=', shopId).where('webhook_id', '=', webhookId);
}

/** The attempts of these deliveries, by delivery, in order. */
export async function attemptsOf(db: DB, shopId: number, deliveryIds: readonly number[]): Promise<Map<number, AttemptRow[]>> {
  const out = new Map<number, AttemptRow[]>();
  if (deliveryIds.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('delivery_id', 'in', [...deliveryIds])
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
  for (const row of rows) pushTo(out, Number(row.delivery_id), row);
  return out;
}

/** Makes a delivery due now, whatever its state (a merchant's "resend"). */
export async function requeueDelivery(trx: DB, shopId: number, webhookId: number, id: number, now: number): Promise<DeliveryRow | undefined> {
  return trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, updated_at: now })
    .where('shop_id', '=', shopId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes settled (delivered or failed) deliveries last changed before `olderThan`, with their attempts. */
export async function pruneDeliveries(db: DB, olderThan: number): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '<>', PENDING as never)
    .where('updated_at', '<', olderThan)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
