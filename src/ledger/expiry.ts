import { allocateIds, lockCustomers, transaction, tryTransactionLock } from '../db/dialect.js';
import type { DB, PointsEventsTable } from '../db/tables.js';
import { balancesOf, ZERO_BALANCE } from './balances.js';
import { insertEvents } from './events-repository.js';
import { customersWithExpiredLots, expiredLots, insertConsumptions, setLotsRemaining } from './lots-repository.js';
import { EXPIRATION_SOURCE } from './schemas.js';
import { findCustomers } from '../customers/repository.js';
import { enqueueWebhookEvents } from '../webhooks/outbox.js';
import { eventJson } from './event-json.js';

// The expiry sweep writes an `expiration` event for every lot that expired with something
// left, so the ledger explains every change of balance. Balances never wait for it: they
// already leave out expired lots (balances.ts).

/** Customers handled per transaction. */
const CHUNK = 500;

/**
 * Expires the lots of these customers that expired by `now`: one event per lot (applied_at is
 * the lot's expiry), a consumption recording it, and the lot emptied. Returns the event count.
 */
export async function expireLots(trx: DB, shopId: number, remoteIds: readonly number[], now: number): Promise<number> {
  // The same lock as deductions take, so a lot is never both spent and expired.
  await lockCustomers(trx, shopId, remoteIds);
  const lots = await expiredLots(trx, shopId, remoteIds, now);
  if (lots.length === 0) return 0;
  const balances = await balancesOf(trx, shopId, [...new Set(lots.map((l) => l.customerRemoteId))], now);
  const ids = await allocateIds(trx, shopId, 'points_events', lots.length);
  const events: PointsEventsTable[] = lots.map((lot, i) => {
    const balance = balances.get(lot.customerRemoteId) ?? ZERO_BALANCE;
    return {
      shop_id: shopId,
      id: ids[i]!,
      customer_remote_id: lot.customerRemoteId,
      source: EXPIRATION_SOURCE,
      points_amount: lot.kind === 'points' ? -lot.remaining : 0,
      credits_amount: lot.kind === 'credits' ? -lot.remaining : 0,
      internal_note: `Expired what was left of the ${lot.kind} granted by points event ${lot.eventId}`,
      external_note: null,
      custom_action_name: null,
      applied_at: lot.expiresAt,
      expires_at: null,
      created_at: now,
      points_balance: balance.points,
      credits_balance: balance.credits,
    };
  });
  await insertEvents(trx, events);
  await insertConsumptions(trx, lots.map((lot, i) => ({ shop_id: shopId, event_id: ids[i]!, lot_id: lot.id, amount: lot.remaining })));
  await setLotsRemaining(trx, shopId, lots.map((lot) => ({ id: lot.id, remaining: 0 })));
  await enqueueWebhookEvents(trx, shopId, 'points_event.expired', () => withEmails(trx, shopId, events), now);
  return events.length;
}

/** Expiration events as the API shows them (with each customer's e-mail). */
async function withEmails(trx: DB, shopId: number, events: PointsEventsTable[]) {
  const customers = await findCustomers(trx, shopId, [...new Set(events.map((e) => String(e.customer_remote_id)))]);
  return events.map((e) => eventJson(e, customers.get(String(e.customer_remote_id))?.email ?? null));
}

/**
 * Sweeps every shop, a chunk of customers per transaction. On PostgreSQL one process sweeps at
 * a time: a run that finds the sweep lock taken stops and leaves the work to the holder.
 * Returns the number of expiration events written.
 */
export async function sweepExpiredLots(db: DB, now: number): Promise<number> {
  let written = 0;
  for (;;) {
    const work = await customersWithExpiredLots(db, now, CHUNK);
    if (work.length === 0) return written;
    const byShop = new Map<number, number[]>();
    for (const { shopId, remoteId } of work) byShop.set(shopId, [...(byShop.get(shopId) ?? []), remoteId]);
    for (const [shopId, remoteIds] of byShop) {
      const count = await transaction(db, async (trx) => ((await tryTransactionLock(trx, 'expiry-sweep')) ? expireLots(trx, shopId, remoteIds, now) : null));
      if (count === null) return written;
      written += count;
    }
  }
}
