import type { DB } from '../db/tables.js';
import { postEvents } from '../ledger/post.js';
import type { Posted, Posting, PostOptions } from '../ledger/posting.js';
import { getShop } from '../shops/repository.js';
import { retier, tiersOf } from '../tiers/tiers.js';

// What follows a posting in the programme (ARCHITECTURE.md, "How a write flows"):
// the code that owns a write posts through the ledger and then calls these, in the same
// transaction, explicitly. The ledger says what changed (each customer's balances before and
// after); a customer whose points earned in the tier window moved is given the tier they
// reach, when the shop's tiers are judged by points earned. Pending points are the ledger's
// own (PostOptions.pending). An order settlement (orders.ts) follows its postings with
// followSettlement (settlement-effects.ts): the tiers its order sums reach, then the referrals
// its first paid orders complete, whose rewards post through this module in turn.

export interface Effects {
  /** After the ledger wrote: the tiers the changed customers' points earned reach. */
  follow(posted: Posted, now: number): Promise<void>;
}

/**
 * What the effects of these postings need, read before the ledger locks the customers (the
 * locked rows are held to commit, and the shop's other writers queue for them): the shop's
 * tiers, when the postings move points (`movesPoints`).
 */
export async function postingEffects(trx: DB, shopId: number, movesPoints: boolean): Promise<Effects> {
  // Tiers judged by another metric follow the orders (orders.ts), not the points.
  const byPoints = movesPoints && (await getShop(trx, shopId))!.vip_tier_metric === 'points_earned';
  const tiers = byPoints ? await tiersOf(trx, shopId) : [];
  return {
    async follow(posted, now) {
      if (tiers.length === 0) return;
      const moved = posted.changed.filter((c) => c.after.earnedWindow !== c.before.earnedWindow);
      if (moved.length === 0) return;
      await retier(
        trx,
        shopId,
        moved.map((c) => ({ remoteId: c.remoteId, email: c.email, value: c.after.earnedWindow, stored: c.after.earnedWindow, tierId: c.before.tierId })),
        now,
        tiers,
      );
    },
  };
}

/** Posts through the ledger, then what follows: the programme's way to post. */
export async function postWithEffects(trx: DB, shopId: number, postings: readonly Posting[], now: number, options: PostOptions = {}): Promise<Posted> {
  const effects = await postingEffects(
    trx,
    shopId,
    postings.some((p) => p.entry.points !== 0),
  );
  const posted = await postEvents(trx, shopId, postings, now, options);
  if (posted.failures.length === 0) await effects.follow(posted, now);
  return posted;
}
