import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { perKey, type KeyColumn } from '../db/dialect.js';
import type { DB, LotKind } from '../db/tables.js';

// Points and credits lots: what each grant has left, and which lots each deduction consumed.
// Every read of one customer's lots goes through the points_lots_fifo index (migration 005):
// (shop_id, customer_remote_id, kind, expiry key, id, remaining) where remaining > 0. The
// expiry key sorts never-expiring lots last; `remaining > 0` and the key are written exactly
// as the index has them, so that both planners use it.

import { NEVER } from './lot-queue.js';

export { NEVER };
const KEY = sql.raw('coalesce(expires_at, 9007199254740991)');
const OPEN = sql.raw('remaining > 0');

export interface OpenLot {
  id: number;
  customerRemoteId: number;
  kind: LotKind;
  remaining: number;
  /** The FIFO key: the expiry, or NEVER. */
  key: number;
}

const CUSTOMER_KIND: KeyColumn[] = [
  { name: 'cust', type: 'bigint' },
  { name: 'kind', type: 'text' },
  { name: 'after_key', type: 'bigint' },
  { name: 'after_id', type: 'bigint' },
];

/** Where a customer's FIFO read resumes: after the lot (key, id) read last. */
export interface FifoCursor {
  remoteId: number;
  kind: LotKind;
  afterKey: number;
  afterId: number;
}

/**
 * The next `limit` unexpired lots of each cursor's customer and kind, in FIFO order (earliest
 * expiry first, never-expiring last, oldest first among equals), read off the index. A cursor
 * starts at (now, NEVER): lots that expired by `now` are skipped. The limit is written into
 * the SQL: SQLite plans a bound LIMIT several times slower (11 µs against 2 µs a read).
 */
export async function fifoLots(db: DB, shopId: number, cursors: readonly FifoCursor[], limit: number): Promise<OpenLot[]> {
  const keys = cursors.map((c) => ({ cust: c.remoteId, kind: c.kind, after_key: c.afterKey, after_id: c.afterId }));
  const rows = await perKey(
    db,
    CUSTOMER_KIND,
    keys,
    (ref) =>
      sql<{ id: number; remaining: number; lot_key: number }>`select id, remaining, ${KEY} as lot_key from points_lots
      where shop_id = ${shopId} and customer_remote_id = ${ref('cust')} and kind = ${ref('kind')} and ${OPEN}
        and ${KEY} >= ${ref('after_key')} and (${KEY} > ${ref('after_key')} or id > ${ref('after_id')})
      order by ${KEY}, id limit ${sql.lit(limit)}`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    customerRemoteId: Number(r.cust),
    kind: r.kind as LotKind,
    remaining: Number(r.remaining),
    key: Number(r.lot_key),
  }));
}

/** Sets what is left in existing lots, many per statement (a CASE on the id works on both databases). */
export async function setLotsRemaining(db: DB, shopId: number, lots: readonly { id: number; remaining: number }[]): Promise<void> {
  for (let i = 0; i < lots.length; i += 1000) {
    const chunk = lots.slice(i, i + 1000);
    const cases = sql.join(
      chunk.map((l) => sql`when ${l.id} then cast(${l.remaining} as bigint)`),
      sql` `,
    );
    await db
      .updateTable('points_lots')
      .set({ remaining: sql<number>`case id ${cases} end` })
      .where('shop_id', '=', shopId)
      .where(
        'id',
        'in',
        chunk.map((l) => l.id),
      )
      .execute();
  }
}

export const CUSTOMER: KeyColumn[] = [{ name: 'cust', type: 'bigint' }];

/** A reference to the customer's remote_id inside a query run per customer (db/dialect.ts perKey). */
export type CustomerRef = (column: 'cust') => RawBuilder<unknown>;

/** What the customer's lots of `kind` that expired by `now` still hold (the sweep has not written them off yet). */
export function expiredSumSql(shopId: number, cust: CustomerRef, kind: LotKind, now: number): RawBuilder<number> {
  return sql`(select coalesce(sum(remaining), 0) from points_lots where shop_id = ${shopId} and customer_remote_id = ${cust('cust')} and kind = ${kind} and ${OPEN} and ${KEY} <= ${now})`;
}

/**
 * `from (…) h` for a query run per customer: h.next_at, the earliest expiry after `after`
 * among the customer's lots that hold something (null when none expires): two index probes.
 */
export function nextExpirySql(shopId: number, cust: CustomerRef, after: number): RawBuilder<unknown> {
  const head = (kind: LotKind) =>
    sql`(select ${KEY} from points_lots where shop_id = ${shopId} and customer_remote_id = ${cust('cust')} and kind = ${kind} and ${OPEN} and ${KEY} > ${after} order by ${KEY}, id limit 1)`;
  return sql`(select case when min(x) < ${sql.raw(String(NEVER))} then min(x) end as next_at from (select ${head('points')} as x union all select ${head('credits')}) heads)`;
}

/** What the customer's lots of `kind` expiring at h.next_at hold (see nextExpirySql). */
export function nextExpiryAmountSql(shopId: number, cust: CustomerRef, kind: LotKind): RawBuilder<number> {
  return sql`(select coalesce(sum(remaining), 0) from points_lots where shop_id = ${shopId} and customer_remote_id = ${cust('cust')} and kind = ${kind} and ${OPEN} and ${KEY} = h.next_at)`;
}

/** The earliest expiry among a customer's lots that hold something, and what those lots hold. */
export interface NextExpiry {
  at: number;
  points: number;
  credits: number;
}

export function toNextExpiry(at: number | null, points: number, credits: number): NextExpiry | null {
  return at === null ? null : { at: Number(at), points: Number(points), credits: Number(credits) };
}

/**
 * Each customer's earliest expiry after `after` among lots that still hold something
 * (never-expiring lots have none), with the points and credits of the lots expiring then.
 */
export async function nextExpiries(db: DB, shopId: number, remoteIds: readonly number[], after: number): Promise<Map<number, NextExpiry | null>> {
  const rows = await perKey(
    db,
    CUSTOMER,
    remoteIds.map((cust) => ({ cust })),
    (ref) =>
      sql<{ next_at: number | null; next_points: number; next_credits: number }>`select h.next_at,
      ${nextExpiryAmountSql(shopId, ref, 'points')} as next_points, ${nextExpiryAmountSql(shopId, ref, 'credits')} as next_credits
      from ${nextExpirySql(shopId, ref, after)} h`,
  );
  return new Map(rows.map((r) => [Number(r.cust), toNextExpiry(r.next_at, r.next_points, r.next_credits)]));
}

/** A lot the sweep writes off. */
export interface ExpiredLot {
  id: number;
  customerRemoteId: number;
  kind: LotKind;
  remaining: number;
  expiresAt: number;
  eventId: number;
}

/**
 * Customers of any shop whose lots expired by `now` with something left: the sweep's work
 * list, read off the points_lots_expiring index, oldest expiry first, `limit` lots at most.
 */
export async function customersWithExpiredLots(db: DB, now: number, limit: number): Promise<{ shopId: number; remoteId: number }[]> {
  const rows = await db
    .selectFrom('points_lots')
    .select(['shop_id', 'customer_remote_id'])
    .where(sql<boolean>`remaining > 0 and expires_at is not null`)
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  const seen = new Map<string, { shopId: number; remoteId: number }>();
  for (const r of rows) seen.set(`${r.shop_id}:${r.customer_remote_id}`, { shopId: Number(r.shop_id), remoteId: Number(r.customer_remote_id) });
  return [...seen.values()];
}

/**
 * Up to `limit` lots of one customer and kind that expired by `now` with something left, in FIFO
 * order; with `now` NEVER, every lot that holds something (a never-expiring lot's expiresAt is NEVER).
 */
export async function expiredLots(db: DB, shopId: number, remoteId: number, kind: LotKind, now: number, limit: number): Promise<ExpiredLot[]> {
  const rows = await db
    .selectFrom('points_lots')
    .select(['id', 'remaining', 'expires_at', 'event_id'])
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', '=', remoteId)
    .where('kind', '=', kind)
    .where(sql<boolean>`${OPEN} and ${KEY} <= ${now}`)
    .orderBy(KEY)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    customerRemoteId: remoteId,
    kind,
    remaining: Number(r.remaining),
    expiresAt: r.expires_at === null ? NEVER : Number(r.expires_at),
    eventId: Number(r.event_id),
  }));
}

/** A customer's open lot with the event that granted it, as the lots list reads it. */
export interface OpenLotRow {
  id: number;
  kind: LotKind;
  amount: number;
  remaining: number;
  expires_at: number | null;
  created_at: number;
  expiry_key: number;
  event_id: number;
  source: string;
  applied_at: number;
  internal_note: string | null;
}

/**
 * The customer's open lots (something left, not expired by `now`: what the available balance
 * is made of), each with its granting event, for a list page (http/pagination.ts adds the
 * order and the page). `expiry_key` orders them as deductions consume them: earliest expiry
 * first, never-expiring last. The lots are read off the points_lots_fifo index's customer prefix.
 */
export function openLotsQuery(db: DB, shopId: number, customerRemoteId: number, now: number, kind?: LotKind): SelectQueryBuilder<any, any, OpenLotRow> {
  let lots = db
    .selectFrom('points_lots')
    .innerJoin('points_events', (j) => j.onRef('points_events.shop_id', '=', 'points_lots.shop_id').onRef('points_events.id', '=', 'points_lots.event_id'))
    .select([
      'points_lots.id',
      'points_lots.kind',
      'points_lots.amount',
      'points_lots.remaining',
      'points_lots.expires_at',
      'points_lots.created_at',
      sql<number>`coalesce(points_lots.expires_at, ${sql.raw(String(NEVER))})`.as('expiry_key'),
      'points_lots.event_id',
      'points_events.source',
      'points_events.applied_at',
      'points_events.internal_note',
    ])
    .where('points_lots.shop_id', '=', shopId)
    .where('points_lots.customer_remote_id', '=', customerRemoteId)
    .where(sql<boolean>`points_lots.remaining > 0 and coalesce(points_lots.expires_at, ${sql.raw(String(NEVER))}) > ${now}`);
  if (kind !== undefined) lots = lots.where('points_lots.kind', '=', kind);
  // A derived table, so that pagination orders and pages by expiry_key as by a column.
  return db.selectFrom(lots.as('lots')).selectAll() as unknown as SelectQueryBuilder<any, any, OpenLotRow>;
}
