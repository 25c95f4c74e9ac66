import { DAY_MS } from '../clock.js';

// Points earned count on the day they were earned (customer_earned_days), and the ledger keeps
// each customer's sum from the first day of the shop's window on (docs/earning.md, "VIP
// tiers"): over their lifetime, this calendar year, or the last 12 months. Pure arithmetic;
// the tiers that follow from the sum are the programme's (tiers/).

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
