import { sql } from 'kysely';
import type { DB } from '../db/tables.js';
import { AppError } from '../errors.js';
import { getShop } from '../shops/repository.js';
import { voidRedemption } from './service.js';

// Orders use redemptions' codes (docs/earning.md, "Orders"): an order that lists the code of an
// issued redemption in discount_codes marks it used by that order; when the order becomes
// refunded, voided or cancelled, the redemptions it used are voided through the same path as
// POST /redemptions/{id}/void, and their points return (shop setting
// restore_redeemed_points_on_refund). Re-sending an order changes nothing twice: a redemption is
// linked to one order at most, and a voided one is not found again.

/** The statuses that give the points of the order's redemptions back. */
const UNDONE = new Set(['refunded', 'voided', 'cancelled']);

export interface OrderCodes {
  remoteId: number;
  status: string;
  placedAt: number;
  codes: readonly string[];
}

/** Links the orders' codes to their redemptions, and voids those of undone orders, in the caller's transaction. */
export async function followOrderCodes(trx: DB, shopId: number, orders: readonly OrderCodes[], now: number): Promise<void> {
  for (const order of orders) {
    if (order.codes.length === 0 || UNDONE.has(order.status)) continue;
    // One statement: racing orders with the same code link it once. A code still issued and
    // valid when the order was placed, or one the platform marked used (POST /use) with no order yet.
    await sql`update redemptions set status = 'used', used_at = coalesce(used_at, ${now}), order_remote_id = ${order.remoteId}, updated_at = ${now}
      where shop_id = ${shopId} and code in (${sql.join([...new Set(order.codes)])}) and order_remote_id is null
        and (status = 'used' or (status = 'issued' and (expires_at is null or expires_at > ${order.placedAt})))`.execute(trx);
  }
  const undone = orders.filter((o) => UNDONE.has(o.status)).map((o) => o.remoteId);
  if (undone.length === 0 || !(await getShop(trx, shopId))!.restore_redeemed_points_on_refund) return;
  for (let i = 0; i < undone.length; i += 500) {
    const used = await trx
      .selectFrom('redemptions')
      .select('id')
      .where('shop_id', '=', shopId)
      .where('order_remote_id', 'in', undone.slice(i, i + 500))
      .where('status', '=', 'used')
      .orderBy('id')
      .execute();
    for (const { id } of used) {
      // A racing refund of the same order voided it first: nothing more to give back.
      await voidRedemption(trx, shopId, Number(id), now, { byOrder: true }).catch((error: unknown) => {
        if (!(error instanceof AppError && error.code === 'redemption_not_voidable')) throw error;
      });
    }
  }
}
