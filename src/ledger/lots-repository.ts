import { sql } from 'kysely';
import { insertRows } from '../db/dialect.js';
import type { DB, LotConsumptionsTable, LotKind, PointsLotsTable } from '../db/tables.js';

// Points and credits lots: what each grant has left, and which lots each deduction consumed.
// `remaining > 0` is written as a literal so that the planners match the partial indexes.

export interface OpenLot {
  id: number;
  customerRemoteId: number;
  kind: LotKind;
  remaining: number;
  expiresAt: number | null;
}

export async function insertLots(db: DB, rows: PointsLotsTable[]): Promise<void> {
  await insertRows(db, 'points_lots', rows);
}

export async function insertConsumptions(db: DB, rows: LotConsumptionsTable[]): Promise<void> {
  await insertRows(db, 'lot_consumptions', rows);
}

/** Lots of these customers that still hold something and have not expired at `now`. */
export async function openLots(db: DB, shopId: number, remoteIds: readonly number[], now: number): Promise<OpenLot[]> {
  const out: OpenLot[] = [];
  for (let i = 0; i < remoteIds.length; i += 500) {
    const rows = await db
      .selectFrom('points_lots')
      .select(['id', 'customer_remote_id', 'kind', 'remaining', 'expires_at'])
      .where('shop_id', '=', shopId)
      .where('customer_remote_id', 'in', remoteIds.slice(i, i + 500) as number[])
      .where('remaining', '>', sql.lit(0))
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .execute();
    for (const r of rows) {
      out.push({
        id: Number(r.id),
        customerRemoteId: Number(r.customer_remote_id),
        kind: r.kind,
        remaining: Number(r.remaining),
        expiresAt: r.expires_at === null ? null : Number(r.expires_at),
      });
    }
  }
  return out;
}

/** Sets what is left in existing lots, many per statement (a CASE on the id works on both databases). */
export async function setLotsRemaining(db: DB, shopId: number, lots: readonly { id: number; remaining: number }[]): Promise<void> {
  for (let i = 0; i < lots.length; i += 1000) {
    const chunk = lots.slice(i, i + 1000);
    const cases = sql.join(chunk.map((l) => sql`when ${l.id} then cast(${l.remaining} as bigint)`), sql` `);
    await db
      .updateTable('points_lots')
      .set({ remaining: sql<number>`case id ${cases} end` })
      .where('shop_id', '=', shopId)
      .where('id', 'in', chunk.map((l) => l.id))
      .execute();
  }
}

/** Lots that expired by `now` with something left, oldest expiry first. */
export async function expiredLots(db: DB, shopId: number, remoteIds: readonly number[], now: number): Promise<(OpenLot & { expiresAt: number; eventId: number })[]> {
  if (remoteIds.length === 0) return [];
  const rows = await db
    .selectFrom('points_lots')
    .select(['id', 'customer_remote_id', 'kind', 'remaining', 'expires_at', 'event_id'])
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', 'in', remoteIds as number[])
    .where('remaining', '>', sql.lit(0))
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    customerRemoteId: Number(r.customer_remote_id),
    kind: r.kind,
    remaining: Number(r.remaining),
    expiresAt: Number(r.expires_at),
    eventId: Number(r.event_id),
  }));
}

/**
 * Customers who have lots that expired by `now` with something left, across shops: the
 * sweep's work list. Reads at most `limit` lots, oldest expiry first, straight off the
 * points_lots_expiring partial index (no sort), so each call costs the same however large
 * the backlog.
 */
export async function customersWithExpiredLots(db: DB, now: number, limit: number): Promise<{ shopId: number; remoteId: number }[]> {
  const rows = await db
    .selectFrom('points_lots')
    .select(['shop_id', 'customer_remote_id'])
    .where('remaining', '>', sql.lit(0))
    .where('expires_at', 'is not', null)
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
  const seen = new Map<string, { shopId: number; remoteId: number }>();
  for (const r of rows) seen.set(`${r.shop_id}:${r.customer_remote_id}`, { shopId: Number(r.shop_id), remoteId: Number(r.customer_remote_id) });
  return [...seen.values()];
}
