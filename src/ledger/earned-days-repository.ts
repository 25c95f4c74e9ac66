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

/** The write that adds points to customers' earned days (writeRows, with the posting's other rows). */
export function addEarnedDays(rows: CustomerEarnedDaysTable[]): RowWrite {
  return { insert: 'customer_earned_days', rows, onConflict: { key: ['shop_id', 'customer_remote_id', 'day'], update: [], add: ['points'] } };
}
