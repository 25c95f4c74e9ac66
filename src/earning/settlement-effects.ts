import type { DB } from '../db/tables.js';
import { completeReferralsOf } from '../referrals/service.js';
import type { Shop } from '../shops/repository.js';
import { retier, tiersOf, type TierSubject } from '../tiers/tiers.js';

// What follows an order settlement (ARCHITECTURE.md, "How a write flows"), beside effects.ts
// rather than in it: a referral's rewards post through effects.ts, so referrals/ imports it,
// and this module, which completes referrals, sits above both.

/** What an order settlement changed beside its postings. */
export interface Settled {
  /** With an order metric, the customers whose order days changed, judged by their sums as written (tiers/metric.ts). */
  subjects: readonly TierSubject[];
  /** The buyers whose first paid order earned. */
  firstPaid: readonly { remoteId: number; email: string | null }[];
}

/**
 * What follows an order settlement, after its postings, order days and sums are written: with
 * an order metric, the customers whose order days changed get the tier they reach; then each first
 * paid order completes its customer's pending referral, whose rewards post (and follow) in turn.
 */
export async function followSettlement(trx: DB, shop: Shop, settled: Settled, now: number): Promise<void> {
  if (settled.subjects.length > 0) {
    const tiers = await tiersOf(trx, shop.id);
    if (tiers.length > 0) await retier(trx, shop.id, settled.subjects, now, tiers);
  }
  await completeReferralsOf(trx, shop.id, settled.firstPaid, now);
}
