import { DAY_MS } from '../clock.js';
import type { RowWrite } from '../db/dialect.js';
import { getShop } from '../shops/repository.js';
import type { CustomerEarnedDaysTable, DB } from '../db/tables.js';

// The window VIP tiers are judged by (docs/earning.md, "VIP tiers"): the points a customer
// earned over their lifetime, in this calendar year, or in the last 12 months. Points count on
// the day they were earned (customer_earned_days); a window is the days from its first on.

export const TIER_WINDOWS = ['lifetime', 'calendar_year', 'rolling_12_months'] as const;
export type TierWindow = (typeof TIER_WINDOWS)[number];

/** Days since 1970-01-01 (UTC) of an instant. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/**
 * The first day of the window at `now`: 0 for the lifetime, 1 January for the calendar year,
 * and for the last 12 months the day after the same date a year ago (today included, 365 or
 * 366 days in all).
 */
export function windowStart(window: string, now: number): number {
  const date = new Date(now);
  if (window === 'calendar_year') return dayOf(Date.UTC(date.getUTCFullYear(), 0, 1));
  if (window === 'rolling_12_months') return dayOf(Date.UTC(date.getUTCFullYear() - 1, date.getUTCMonth(), date.getUTCDate())) + 1;
  return 0;
}

/** The first day of the shop's VIP tier window at `now`. */
export async function shopWindowStart(db: DB, shopId: number, now: number): Promise<number> {
  return windowStart((await getShop(db, shopId))?.vip_tier_window ?? 'lifetime', now);
}

/** A customer whose points earned change, as the ledger holds them before the change. */
export interface WindowSubject {
  remoteId: number;
  earnedLifetime: number;
  earnedWindow: number;
  windowFrom: number;
  /** What changes the points earned, by the day the points were earned. */
  days: ReadonlyMap<number, number>;
}

/**
 * In the ledger's transaction: each customer's points earned in the shop's window at `now`
 * once the changes are added, and the write that adds them to the customers' earned days (the
 * caller writes it with its own: writeRows). A sum made for an earlier window is made again
 * first, from the earned days (at most a year of them).
 */
export async function changeEarnedDays(
  trx: DB,
  shopId: number,
  subjects: readonly WindowSubject[],
  now: number,
): Promise<{ windows: Map<number, { earned: number; from: number }>; write: RowWrite }> {
  const windows = new Map<number, { earned: number; from: number }>();
  const rows: CustomerEarnedDaysTable[] = [];
  const write: RowWrite = { insert: 'customer_earned_days', rows, onConflict: { key: ['shop_id', 'customer_remote_id', 'day'], update: [], add: ['points'] } };
  if (subjects.length === 0) return { windows, write };
  const start = await shopWindowStart(trx, shopId, now);
  for (const s of subjects) {
    let earned = s.windowFrom === start ? s.earnedWindow : start === 0 ? s.earnedLifetime : await earnedSince(trx, shopId, s.remoteId, start);
    for (const [day, points] of s.days) if (day >= start) earned += points;
    windows.set(s.remoteId, { earned, from: start });
  }
  for (const s of subjects) for (const [day, points] of s.days) rows.push({ shop_id: shopId, customer_remote_id: s.remoteId, day, points });
  return { windows, write };
}

/** What the customer earned from `day` on, summed from their earned days. */
async function earnedSince(db: DB, shopId: number, remoteId: number, day: number): Promise<number> {
  const row = await db
    .selectFrom('customer_earned_days')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('points'), eb.lit(0)).as('n'))
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', '=', remoteId)
    .where('day', '>=', day)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
