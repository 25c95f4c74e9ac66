import { sql } from 'kysely';
import type { RowWrite } from '../db/dialect.js';
import type { CustomerEarnedDaysTable, DB } from '../db/tables.js';

// customer_earned_days: the points each customer earned, by the day they were earned
// (earned-window.ts). Postings add to them; a window's sum is made again from them when the
// shop's window moved on.

/** What the customer earned from `day` on, summed from their earned days. */
export async function earnedSince(db: DB, shopId: number, remoteId: number, day: number): Promise<number> {
  const row = await db
    .selectFrom('customer_earned_days')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('points'), eb.lit(0)).as('n'))
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', '=', remoteId)
    .where('day', '>=', day)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Sums again the points earned from day `start` on of the shop's next `limit` customers after
 * remote_id `after`, where their stored sum is of another window (the window moved on, or
 * the shop chose another): the stored balance column the tiers are judged by.
 */
export async function sumEarnedWindows(trx: DB, shopId: number, after: number, limit: number, start: number, now: number): Promise<void> {
  const page = await trx
    .selectFrom('customers')
    .select('remote_id')
    .where('shop_id', '=', shopId)
    .where('remote_id', '>', after)
    .orderBy('remote_id')
    .limit(limit)
    .execute();
  if (page.length === 0) return;
  const last = Number(page[page.length - 1]!.remote_id);
  const earned =
    start === 0
      ? sql<number>`points_earned_lifetime`
      : sql<number>`(select coalesce(sum(d.points), 0) from customer_earned_days d
          where d.shop_id = customers.shop_id and d.customer_remote_id = customers.remote_id and d.day >= ${start})`;
  await trx
    .updateTable('customers')
    // The sum shows as vip_tier_progress.points_earned: updated_at moves only when it changed.
    .set({
      points_earned_window: earned,
      tier_window_from: start,
      updated_at: sql<number>`case when points_earned_window <> ${earned} then ${now} else updated_at end`,
    })
    .where('shop_id', '=', shopId)
    .where('remote_id', '>', after)
    .where('remote_id', '<=', last)
    .where('tier_window_from', '<>', start)
    .execute();
}

/** The write that adds points to customers' earned days (writeRows, with the posting's other rows). */
export function addEarnedDays(rows: CustomerEarnedDaysTable[]): RowWrite {
  return { insert: 'customer_earned_days', rows, onConflict: { key: ['shop_id', 'customer_remote_id', 'day'], update: [], add: ['points'] } };
}
