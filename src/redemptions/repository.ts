import type { Selectable } from 'kysely';
import { isoTime } from '../clock.js';
import type { DB, RedemptionsTable } from '../db/tables.js';
import type { Redemption } from './schemas.js';

// Reading redemptions: with their customer's e-mail as it is now.

export type RedemptionRow = Selectable<RedemptionsTable> & { email: string | null };

/** The shop's redemptions with their customer's e-mail; `customerRemoteId` narrows to one customer. */
export function redemptionsQuery(db: DB, shopId: number, filters: { customerRemoteId?: number } = {}) {
  let query = db
    .selectFrom('redemptions')
    .leftJoin('customers', (j) => j.onRef('customers.shop_id', '=', 'redemptions.shop_id').onRef('customers.remote_id', '=', 'redemptions.customer_remote_id'))
    .selectAll('redemptions')
    .select('customers.email')
    .where('redemptions.shop_id', '=', shopId);
  if (filters.customerRemoteId !== undefined) query = query.where('redemptions.customer_remote_id', '=', filters.customerRemoteId);
  return query;
}

/**
 * How many redemptions each of these rewards has had, voided ones included (as they count
 * towards limit_per_customer): summed from reward_redemption_days, which a trigger keeps with
 * every redemption (migration 015), so a page of rewards reads a row per reward and day, never
 * one per redemption. A reward without any is absent.
 */
export async function redemptionCounts(db: DB, shopId: number, rewardIds: readonly number[]): Promise<Map<number, number>> {
  if (rewardIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('reward_redemption_days')
    .select(['reward_id', (eb) => eb.fn.sum<number | string>('n').as('n')])
    .where('shop_id', '=', shopId)
    .where('reward_id', 'in', rewardIds)
    .groupBy('reward_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.reward_id), Number(r.n)]));
}

export async function findRedemption(db: DB, shopId: number, id: number): Promise<RedemptionRow | undefined> {
  return redemptionsQuery(db, shopId).where('redemptions.id', '=', id).executeTakeFirst();
}

const timeOrNull = (ms: number | null) => (ms === null ? null : isoTime(Number(ms)));

/** A stored redemption as the API shows it. */
export function redemptionJson(row: RedemptionRow): Redemption {
  return {
    id: Number(row.id),
    reward: { id: Number(row.reward_id), name: row.reward_name },
    customer: { remote_id: Number(row.customer_remote_id), email: row.email },
    points_spent: Number(row.points_spent),
    code: row.code,
    status: row.status,
    expires_at: timeOrNull(row.expires_at),
    points_event_id: Number(row.points_event_id),
    void_event_id: row.void_event_id === null ? null : Number(row.void_event_id),
    used_at: timeOrNull(row.used_at),
    order_remote_id: row.order_remote_id === null || row.order_remote_id === undefined ? null : Number(row.order_remote_id),
    voided_at: timeOrNull(row.voided_at),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}
