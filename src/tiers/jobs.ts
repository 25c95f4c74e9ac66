import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { retier, tiersOf } from './tiers.js';

// Re-tiering a shop's customers after its tiers changed, in transactions of at most ROWS
// customers (each a few milliseconds on SQLite), keyed by remote_id from a cursor on the shop,
// so that a restart goes on where it stopped.

const ROWS = 200;

const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One step for one shop: re-tiers the next ROWS customers; returns how many it looked at. */
async function step(db: DB, shopId: number, after: number, now: number): Promise<number> {
  return transaction(db, async (trx) => {
    const customers = await trx
      .selectFrom('customers')
      .select(['remote_id', 'email', 'points_earned_lifetime', 'vip_tier_id'])
      .where('shop_id', '=', shopId)
      .where('remote_id', '>', after)
      .orderBy('remote_id')
      .limit(ROWS)
      .execute();
    const tiers = await tiersOf(trx, shopId);
    await retier(
      trx,
      shopId,
      customers.map((c) => ({ remoteId: Number(c.remote_id), email: c.email, earned: Number(c.points_earned_lifetime), tierId: c.vip_tier_id === null || c.vip_tier_id === undefined ? null : Number(c.vip_tier_id) })),
      now,
      tiers,
    );
    const next = customers.length < ROWS ? null : Number(customers[customers.length - 1]!.remote_id);
    // Only if no tier changed meanwhile (which starts the shop over from 0).
    await trx.updateTable('shops').set({ retier_after: next }).where('id', '=', shopId).where('retier_after', '=', after).execute();
    return customers.length;
  });
}

/** Re-tiers the customers of every shop whose tiers changed; returns how many customers it looked at. */
export async function retierShops(db: DB, now: number): Promise<number> {
  let total = 0;
  for (;;) {
    const shops = await db.selectFrom('shops').select(['id', 'retier_after']).where('retier_after', 'is not', null).execute();
    if (shops.length === 0) return total;
    for (const shop of shops) {
      total += await step(db, Number(shop.id), Number(shop.retier_after), now);
      await yieldToRequests();
    }
  }
}
