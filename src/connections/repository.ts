import { sql, type Selectable } from 'kysely';
import { allocateIds } from '../db/dialect.js';
import type { ConnectionDeliveriesTable, ConnectionsTable, DB } from '../db/tables.js';

// The SQL of store connections (migration 024). Every function takes the database handle first
// (the caller owns the transaction); all but the lookup by the ingest URL's id, and the prune
// across shops, are scoped to one shop.

export type ConnectionRow = Selectable<ConnectionsTable>;
export type ConnectionDeliveryRow = Selectable<ConnectionDeliveriesTable>;

/** The connection an ingest URL names, by its id alone: the shop is not known yet. */
export async function connectionById(db: DB, id: number): Promise<ConnectionRow | undefined> {
  return db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function connectionOf(db: DB, shopId: number, id: number): Promise<ConnectionRow | undefined> {
  return db.selectFrom('connections').selectAll().where('shop_id', '=', shopId).where('id', '=', id).executeTakeFirst();
}

export async function setConnectionStatus(db: DB, shopId: number, id: number, status: string, now: number): Promise<void> {
  await db.updateTable('connections').set({ status, updated_at: now }).where('shop_id', '=', shopId).where('id', '=', id).execute();
}

export interface NewDelivery {
  connectionId: number;
  topic: string;
  dedupeKey: string;
  status: string;
  body: string | null;
  bodyBytes: number;
}

/**
 * Records a delivery under its dedupe key; undefined when the key is already recorded (a
 * duplicate). Two copies at once: the unique key makes the second wait for the first, then do
 * nothing (PostgreSQL), or SQLite's one writer serialises them.
 */
export async function insertDelivery(trx: DB, shopId: number, d: NewDelivery, now: number): Promise<number | undefined> {
  const [id] = await allocateIds(trx, shopId, 'connection_deliveries', 1);
  const row = await trx
    .insertInto('connection_deliveries')
    .values({
      shop_id: shopId,
      id: id!,
      connection_id: d.connectionId,
      topic: d.topic,
      dedupe_key: d.dedupeKey,
      received_at: now,
      status: d.status,
      body_bytes: d.bodyBytes,
      updated_at: now,
    })
    .onConflict((oc) => oc.columns(['shop_id', 'connection_id', 'dedupe_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (row === undefined) return undefined;
  if (d.body !== null)
    await trx.insertInto('connection_delivery_bodies').values({ shop_id: shopId, delivery_id: id!, received_at: now, body: d.body }).execute();
  return id!;
}

/** Whether a delivery under this dedupe key is recorded (a read: a copy costs no write). */
export async function deliveryKnown(db: DB, shopId: number, connectionId: number, dedupeKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('connection_deliveries')
    .select('id')
    .where('shop_id', '=', shopId)
    .where('connection_id', '=', connectionId)
    .where('dedupe_key', '=', dedupeKey)
    .executeTakeFirst();
  return row !== undefined;
}

export interface Outcome {
  status: string;
  error: string | null;
  resource: 'customer' | 'order' | null;
  resourceId: number | null;
  customerRemoteId: number | null;
}

export async function settleDelivery(trx: DB, shopId: number, id: number, o: Outcome, now: number, replayed = false): Promise<void> {
  await trx
    .updateTable('connection_deliveries')
    .set({
      status: o.status,
      error: o.error,
      resource: o.resource,
      resource_id: o.resourceId,
      customer_remote_id: o.customerRemoteId,
      updated_at: now,
      ...(replayed ? { replayed_at: now } : {}),
    })
    .where('shop_id', '=', shopId)
    .where('id', '=', id)
    .execute();
}

/** Deferred deliveries (refunds) of an order that has now arrived become applied. */
export async function resolveDeferred(trx: DB, shopId: number, orderRemoteId: number, now: number): Promise<void> {
  await trx
    .updateTable('connection_deliveries')
    .set({ status: 'applied', error: null, updated_at: now })
    .where('shop_id', '=', shopId)
    .where(sql<boolean>`status = 'deferred'`)
    .where('resource_id', '=', orderRemoteId)
    .where('resource', '=', 'order')
    .execute();
}

/** Erases the kept bodies of the deliveries that concerned a customer (customers/redact). */
export async function eraseBodiesOf(trx: DB, shopId: number, customerRemoteId: number): Promise<void> {
  await trx
    .deleteFrom('connection_delivery_bodies')
    .where('shop_id', '=', shopId)
    .where('delivery_id', 'in', (eb) =>
      eb.selectFrom('connection_deliveries').select('id').where('shop_id', '=', shopId).where('customer_remote_id', '=', customerRemoteId),
    )
    .execute();
}

/**
 * Keeps the source's updated_at of an order or customer, and an order's own refunded figure,
 * unless what is kept is newer (`strict`: as new): returns false then (the payload is stale).
 * The upsert's row lock orders two deliveries of one record on PostgreSQL.
 */
export async function claimSource(
  trx: DB,
  shopId: number,
  kind: 'order' | 'customer',
  remoteId: number,
  updatedAt: number,
  ownRefunded: number | null,
  strict = false,
): Promise<boolean> {
  const row = await trx
    .insertInto('connection_sources')
    .values({ shop_id: shopId, kind, remote_id: remoteId, source_updated_at: updatedAt, own_refunded: ownRefunded })
    .onConflict((oc) =>
      oc
        .columns(['shop_id', 'kind', 'remote_id'])
        .doUpdateSet({ source_updated_at: updatedAt, own_refunded: ownRefunded })
        .where('connection_sources.source_updated_at', strict ? '<' : '<=', updatedAt),
    )
    .returning('remote_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The source's updated_at kept for a record, and an order's own refunded figure. */
export async function sourceOf(db: DB, shopId: number, kind: 'order' | 'customer', remoteId: number) {
  return db
    .selectFrom('connection_sources')
    .select(['source_updated_at', 'own_refunded'])
    .where('shop_id', '=', shopId)
    .where('kind', '=', kind)
    .where('remote_id', '=', remoteId)
    .executeTakeFirst();
}

/** Records a refund once per refund id. */
export async function recordRefund(trx: DB, shopId: number, refundId: number, orderRemoteId: number, amount: number, now: number): Promise<void> {
  await trx
    .insertInto('connection_refunds')
    .values({ shop_id: shopId, refund_id: refundId, order_remote_id: orderRemoteId, amount, created_at: now })
    .onConflict((oc) => oc.columns(['shop_id', 'refund_id']).doNothing())
    .execute();
}

/** The sum of an order's recorded refunds, in hundredths. */
export async function refundedOf(db: DB, shopId: number, orderRemoteId: number): Promise<number> {
  const row = await db
    .selectFrom('connection_refunds')
    .select(sql<number>`coalesce(sum(amount), 0)`.as('n'))
    .where('shop_id', '=', shopId)
    .where('order_remote_id', '=', orderRemoteId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

const LISTED = [
  'id',
  'connection_id',
  'topic',
  'dedupe_key',
  'received_at',
  'status',
  'error',
  'resource',
  'resource_id',
  'customer_remote_id',
  'body_bytes',
  'replayed_at',
  'updated_at',
] as const;

/** A connection's deliveries as listed (whether the body is kept, not the body), unordered, optionally of one status and topic. */
export function deliveriesQuery(db: DB, shopId: number, connectionId: number, filter: { status?: string; topic?: string } = {}) {
  let query = db
    .selectFrom('connection_deliveries')
    .select([
      ...LISTED,
      sql<number>`case when exists (select 1 from connection_delivery_bodies b where b.shop_id = connection_deliveries.shop_id and b.delivery_id = connection_deliveries.id) then 1 else 0 end`.as(
        'body_kept',
      ),
    ])
    .where('shop_id', '=', shopId)
    .where('connection_id', '=', connectionId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.topic !== undefined) query = query.where('topic', '=', filter.topic);
  return query;
}

/** One delivery with its kept body (null once pruned or erased). */
export async function deliveryOf(
  db: DB,
  shopId: number,
  connectionId: number,
  id: number,
): Promise<(ConnectionDeliveryRow & { body: string | null }) | undefined> {
  return db
    .selectFrom('connection_deliveries as d')
    .leftJoin('connection_delivery_bodies as b', (join) => join.onRef('b.shop_id', '=', 'd.shop_id').onRef('b.delivery_id', '=', 'd.id'))
    .selectAll('d')
    .select('b.body')
    .where('d.shop_id', '=', shopId)
    .where('d.connection_id', '=', connectionId)
    .where('d.id', '=', id)
    .executeTakeFirst();
}

/** Drops the kept bodies of deliveries received before `olderThan`, at most `limit` a statement, across shops; returns how many. */
export async function pruneBodies(db: DB, olderThan: number, limit = 1000): Promise<number> {
  let pruned = 0;
  for (;;) {
    const old = await db
      .selectFrom('connection_delivery_bodies')
      .select(['shop_id', 'delivery_id'])
      .where('received_at', '<', olderThan)
      .orderBy('received_at')
      .limit(limit)
      .execute();
    if (old.length === 0) return pruned;
    const byShop = new Map<number, number[]>();
    for (const row of old) byShop.set(Number(row.shop_id), [...(byShop.get(Number(row.shop_id)) ?? []), Number(row.delivery_id)]);
    for (const [shopId, ids] of byShop) {
      const result = await db.deleteFrom('connection_delivery_bodies').where('shop_id', '=', shopId).where('delivery_id', 'in', ids).executeTakeFirst();
      pruned += Number(result.numDeletedRows);
    }
  }
}

/**
 * Runs `fn` inside a savepoint of the caller's transaction: when it throws, what it wrote is
 * undone and the transaction goes on (a replay that fails is kept as failed, with its audit entry).
 */
export async function withSavepoint<T>(trx: DB, fn: () => Promise<T>): Promise<T> {
  await sql`savepoint connection_delivery`.execute(trx);
  try {
    const result = await fn();
    await sql`release savepoint connection_delivery`.execute(trx);
    return result;
  } catch (error) {
    await sql`rollback to savepoint connection_delivery`.execute(trx);
    throw error;
  }
}
