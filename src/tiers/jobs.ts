import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { getShop } from '../shops/repository.js';
import { tierSubjects } from './metric.js';
import { retier, tiersChanged, tiersOf } from './tiers.js';
import { sumEarnedWindows } from '../ledger/earned-days-repository.js';
import { windowStart } from '../ledger/earned-window.js';

// Re-tiering a shop's customers after its tiers, its tier window or its tier metric changed,
// and every day its window moves on (calendar_year, rolling_12_months), in transactions of at
// most ROWS customers (each a few milliseconds on SQLite), keyed by remote_id from a cursor on
// the shop, so that a restart goes on where it stopped. Each step first sums the customers'
// points earned (or order sums, metric.ts) in the window again, from their days, where it was
// summed for another window. Then the customers whose retained tier ran out are moved.

const ROWS = 200;

const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A tier was created, changed or deleted: the shop's customers are re-tiered in the background. */
export async function retierShopLater(trx: DB, shopId: number): Promise<void> {
  await trx.updateTable('shops').set({ retier_after: 0 }).where('id', '=', shopId).execute();
  // Every tier write comes here, in its transaction: tiers kept for reads are dropped.
  tiersChanged();
}

/** One step for one shop: re-tiers the next ROWS customers; returns how many it looked at. */
async function step(db: DB, shopId: number, after: number, now: number): Promise<number> {
  return transaction(db, async (trx) => {
    const shop = (await getShop(trx, shopId))!;
    const start = windowStart(shop.vip_tier_window, now);
    // 0 starts from the first, redacted customers' negative remote_ids included.
    const from = after === 0 ? Number.MIN_SAFE_INTEGER : after;
    await sumEarnedWindows(trx, shopId, from, ROWS, start, now);
    const customers = await trx
      .selectFrom('customers')
      .select('remote_id')
      .where('shop_id', '=', shopId)
      .where('remote_id', '>', from)
      .orderBy('remote_id')
      .limit(ROWS)
      .execute();
    const subjects = await tierSubjects(
      trx,
      shop,
      customers.map((c) => Number(c.remote_id)),
      now,
    );
    await retier(trx, shopId, subjects, now, await tiersOf(trx, shopId));
    const next = customers.length < ROWS ? null : Number(customers[customers.length - 1]!.remote_id);
    // Only if no tier changed meanwhile (which starts the shop over from 0).
    await trx.updateTable('shops').set({ retier_after: next }).where('id', '=', shopId).where('retier_after', '=', after).execute();
    return customers.length;
  });
}

/** One step of the shop's re-tiering, when it has one pending: what the job does between two yields (tests watch reads served between steps). */
export async function retierShopStep(db: DB, shopId: number, now: number): Promise<number> {
  const shop = await db.selectFrom('shops').select('retier_after').where('id', '=', shopId).executeTakeFirst();
  if (shop?.retier_after === null || shop?.retier_after === undefined) return 0;
  return step(db, shopId, Number(shop.retier_after), now);
}

/**
 * Starts re-tiering the shops whose window moved on since their customers were last re-tiered
 * (a new day for rolling_12_months, a new year for calendar_year).
 */
async function moveWindows(db: DB, now: number): Promise<void> {
  const shops = await db.selectFrom('shops').select(['id', 'vip_tier_window', 'tier_window_from']).where('vip_tier_window', '<>', 'lifetime').execute();
  for (const shop of shops) {
    const start = windowStart(shop.vip_tier_window, now);
    if (Number(shop.tier_window_from) === start) continue;
    await db
      .updateTable('shops')
      .set({ tier_window_from: start, retier_after: 0 })
      .where('id', '=', shop.id)
      .where('tier_window_from', '=', shop.tier_window_from)
      .execute();
  }
}

/**
 * Moves the next ROWS customers of the shop whose retained tier ran out by `now` to the tier
 * their value reaches (retained_until is cleared or set again by retier); returns how many.
 */
async function releaseRetained(db: DB, shopId: number, now: number): Promise<number> {
  return transaction(db, async (trx) => {
    const due = await trx
      .selectFrom('customers')
      .select('remote_id')
      .where('shop_id', '=', shopId)
      .where('vip_tier_retained_until', '<=', now)
      .orderBy('vip_tier_retained_until')
      .limit(ROWS)
      .execute();
    if (due.length === 0) return 0;
    const subjects = await tierSubjects(
      trx,
      (await getShop(trx, shopId))!,
      due.map((c) => Number(c.remote_id)),
      now,
    );
    await retier(trx, shopId, subjects, now, await tiersOf(trx, shopId));
    return due.length;
  });
}

/** Re-tiers the customers of every shop whose tiers, window or metric changed, then those whose retention ran out; returns how many it looked at. */
export async function retierShops(db: DB, now: number): Promise<number> {
  await moveWindows(db, now);
  let total = 0;
  for (;;) {
    const shops = await db.selectFrom('shops').select(['id', 'retier_after']).where('retier_after', 'is not', null).execute();
    if (shops.length === 0) break;
    for (const shop of shops) {
      total += await step(db, Number(shop.id), Number(shop.retier_after), now);
      await yieldToRequests();
    }
  }
  for (const shop of await db.selectFrom('shops').select('id').execute()) {
    for (;;) {
      const moved = await releaseRetained(db, Number(shop.id), now);
      total += moved;
      if (moved < ROWS) break;
      await yieldToRequests();
    }
  }
  return total;
}
