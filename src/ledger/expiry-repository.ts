import type { DB } from '../db/tables.js';

// The look-ups of expiry by customer (migration 020): whose balance falls due for inactivity,
// through customers_points_active; whose next expiry comes, through customers_next_expiry.
// Each reads a range of its index, in its order, and no further.

/** Up to `limit` customers last active at or before `activeBy`, those inactive longest first. */
export async function customersActiveBy(db: DB, shopId: number, activeBy: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('customers')
    .select('remote_id')
    .where('shop_id', '=', shopId)
    .where('points_active_at', 'is not', null)
    .where('points_active_at', '<=', activeBy)
    .orderBy('points_active_at')
    .orderBy('remote_id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.remote_id));
}

/** A customer in the order of an index of times: the time and the remote_id. */
export interface TimeCursor {
  at: number;
  id: number;
}

/** A customer found by a reminder, with the time it was found by and what it holds. */
export interface DueCustomer extends TimeCursor {
  points: number;
  credits: number;
}

/**
 * Up to `limit` customers after `after` and at or before `until` in the order of one time
 * column (next_expiry_at or points_active_at), with what they hold: the stored next expiry's
 * amounts or the stored balances.
 */
export async function customersByTime(
  db: DB,
  shopId: number,
  column: 'next_expiry_at' | 'points_active_at',
  after: TimeCursor,
  until: number,
  limit: number,
): Promise<DueCustomer[]> {
  const amounts = column === 'next_expiry_at' ? (['next_expiry_points', 'next_expiry_credits'] as const) : (['points_balance', 'credits_balance'] as const);
  const rows = await db
    .selectFrom('customers')
    .select(['remote_id', column, ...amounts])
    .where('shop_id', '=', shopId)
    .where(column, 'is not', null)
    .where((eb) => eb.or([eb(column, '>', after.at), eb.and([eb(column, '=', after.at), eb('remote_id', '>', after.id)])]))
    .where(column, '<=', until)
    .orderBy(column)
    .orderBy('remote_id')
    .limit(limit)
    .execute();
  return rows.map((r) => {
    const row = r as Record<string, unknown>;
    return { at: Number(row[column]), id: Number(row.remote_id), points: Number(row[amounts[0]]), credits: Number(row[amounts[1]]) };
  });
}
