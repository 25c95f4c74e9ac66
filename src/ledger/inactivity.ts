import { DAY_MS } from '../clock.js';
import type { Shop } from '../shops/repository.js';

// Inactivity mode (docs/ledger.md, "Expiry modes"): a customer's whole available balance
// expires points_inactivity_days after their last posting (customers.points_active_at, kept by
// the writer), and never before a full period after the mode was switched on or its period
// changed (points_inactivity_since).

/** The shop's inactivity expiry: mode, period and since when it holds. */
export type InactivityShop = Pick<Shop, 'points_expiry_mode' | 'points_inactivity_days' | 'points_inactivity_since'>;

/** When a customer last active at `activeAt` has their balance expire, or null when it never does. */
export function inactivityDue(shop: InactivityShop, activeAt: number | null): number | null {
  if (shop.points_expiry_mode !== 'inactivity' || shop.points_inactivity_days === null || activeAt === null) return null;
  return Math.max(activeAt, shop.points_inactivity_since ?? 0) + shop.points_inactivity_days * DAY_MS;
}

/** Whether a balance last active at `activeAt` may be due at `now` in any shop: no period is shorter than a day. */
export const mayBeDue = (activeAt: number | null, now: number): boolean => activeAt !== null && activeAt <= now - DAY_MS;
