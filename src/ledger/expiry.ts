import { allocateIds, transaction, tryTransactionLock, updateRows, writeRows } from '../db/dialect.js';
import type { DB, LotKind, PointsEventsTable } from '../db/tables.js';
import { findCustomers } from '../customers/repository.js';
import { enqueueEvents, wantsTopics } from '../events/outbox.js';
import type { WebhookTopic } from '../events/topics.js';
import { lockBalances, type Balances } from './balances.js';
import { eventJson } from './event-json.js';
import { DAY_MS } from '../clock.js';
import { getShop, listShops } from '../shops/repository.js';
import { customersActiveBy } from './expiry-repository.js';
import { NEVER } from './lot-queue.js';
import { inactivityDue, mayBeDue, type InactivityShop } from './inactivity.js';
import { customersWithExpiredLots, expiredLots, nextExpiries, setLotsRemaining, type ExpiredLot } from './lots-repository.js';
import { EXPIRATION_SOURCE } from './schemas.js';
import { newLotsVersion } from './lots-version.js';
import { totalsWrites } from './totals.js';

// The expiry sweep writes an `expiration` event for every lot that expired with something
// left, so the ledger explains every change of balance. Balances never wait for it: a read
// already leaves out expired lots (balances.ts). It works in bounded transactions (at most
// LOTS_PER_TRANSACTION lots each), so a backlog of a million lots never holds the database
// for longer than one of them.

/** Lots written off per transaction: on SQLite a few milliseconds of work. */
export const LOTS_PER_TRANSACTION = 200;

const EXPIRED: WebhookTopic = 'points_event.expired';

/** A lot written off, when (the event's applied_at), and the customer's available balances the event shows. */
interface WriteOff {
  lot: ExpiredLot;
  at: number;
  points: number;
  credits: number;
}

/**
 * Writes off up to `budget` expired lots of these customers of one shop: one event per lot
 * (applied_at is the lot's expiry), a consumption recording it, the lot emptied, and the
 * customers' stored balances lowered. Returns the number of events written.
 */
export async function expireLots(trx: DB, shopId: number, remoteIds: readonly number[], now: number, budget = LOTS_PER_TRANSACTION): Promise<number> {
  // The same lock as postings take, so a lot is never both spent and expired.
  const balances = await lockBalances(trx, shopId, remoteIds, now);
  const lots: ExpiredLot[] = [];
  for (const remoteId of balances.keys()) {
    for (const kind of ['points', 'credits'] as LotKind[]) {
      if (lots.length >= budget) break;
      lots.push(...(await expiredLots(trx, shopId, remoteId, kind, now, budget - lots.length)));
    }
  }
  if (lots.length === 0) return 0;
  // Writing off expired lots changes what is stored, not what is available.
  const offs = lots.map((lot) => {
    const { points, credits } = balances.get(lot.customerRemoteId)!;
    return { lot, at: lot.expiresAt, points, credits };
  });
  const touched = [...new Set(lots.map((l) => l.customerRemoteId))];
  return writeOff(trx, shopId, balances, offs, new Map(touched.map((id) => [id, balances.get(id)!.activeAt])), now);
}

/**
 * Writes lots off: the lots emptied, one `expiration` event and one consumption each, the
 * customers' stored balances and next expiries, the reports' aggregates, the webhooks.
 * `customers` are the customers whose rows are written, each with the activity time to store.
 */
async function writeOff(
  trx: DB,
  shopId: number,
  balances: ReadonlyMap<number, Balances>,
  offs: readonly WriteOff[],
  customers: ReadonlyMap<number, number | null>,
  now: number,
): Promise<number> {
  const lots = offs.map((o) => o.lot);
  // What needs no new ids is written, and the webhooks read, first, as postEvents does: the
  // shop's lock on event ids is held from allocateIds to commit.
  await setLotsRemaining(
    trx,
    shopId,
    lots.map((lot) => ({ id: lot.id, remaining: 0 })),
  );
  const touched = [...customers.keys()];
  const written = writtenOff(lots);
  await storeWrittenOff(trx, shopId, balances, customers, written, now);
  if (lots.length === 0) return 0;

  // The webhooks show each customer's e-mail.
  const emails = (await wantsTopics(trx, shopId, [EXPIRED])) ? await findCustomers(trx, shopId, touched.map(String)) : null;
  const ids = await allocateIds(trx, shopId, 'points_events', lots.length);
  const events = offs.map((off, i) => expirationEvent(shopId, ids[i]!, off, now));
  // The report's aggregates, in the same statement (totals.ts).
  let holders = 0;
  for (const remoteId of touched) {
    const points = balances.get(remoteId)!.stored.points;
    holders += Number(points - written(remoteId, 'points') > 0) - Number(points > 0);
  }
  await writeRows(trx, [
    { insert: 'points_events', rows: events },
    { insert: 'lot_consumptions', rows: lots.map((lot, i) => ({ shop_id: shopId, event_id: ids[i]!, lot_id: lot.id, amount: lot.remaining })) },
    ...totalsWrites(trx, shopId, events, { holders }),
  ]);
  if (emails !== null)
    await enqueueEvents(
      trx,
      shopId,
      EXPIRED,
      events.map((e) => eventJson(e, emails.get(String(e.customer_remote_id))?.email ?? null)),
      now,
    );
  return events.length;
}

/** The points or credits written off each customer, by these lots. */
const writtenOff =
  (lots: readonly ExpiredLot[]) =>
  (remoteId: number, kind: LotKind): number =>
    lots.reduce((sum, l) => (l.customerRemoteId === remoteId && l.kind === kind ? sum + l.remaining : sum), 0);

/** The customers' stored balances less what was written off, their next expiries (read after the lots were emptied) and activity times. */
async function storeWrittenOff(
  trx: DB,
  shopId: number,
  balances: ReadonlyMap<number, Balances>,
  customers: ReadonlyMap<number, number | null>,
  written: (remoteId: number, kind: LotKind) => number,
  now: number,
): Promise<void> {
  const touched = [...customers.keys()];
  const next = await nextExpiries(trx, shopId, touched, Number.MIN_SAFE_INTEGER);
  await updateRows(
    trx,
    'customers',
    ['shop_id', 'remote_id'],
    touched.map((remoteId) => {
      const stored = balances.get(remoteId)!.stored;
      const nextExpiry = next.get(remoteId) ?? null;
      return {
        shop_id: shopId,
        remote_id: remoteId,
        points_balance: stored.points - written(remoteId, 'points'),
        credits_balance: stored.credits - written(remoteId, 'credits'),
        next_expiry_at: nextExpiry?.at ?? null,
        next_expiry_points: nextExpiry?.points ?? 0,
        next_expiry_credits: nextExpiry?.credits ?? 0,
        points_active_at: customers.get(remoteId) ?? null,
        lots_version: newLotsVersion(),
        // The write-off shows as a new next_expiry (docs/pagination.md, "updated_at").
        updated_at: now,
      };
    }),
  );
}

/** The `expiration` event of a lot written off, showing the customer's available balances. */
function expirationEvent(shopId: number, id: number, { lot, at, points, credits }: WriteOff, now: number): PointsEventsTable {
  return {
    shop_id: shopId,
    id,
    customer_remote_id: lot.customerRemoteId,
    source: EXPIRATION_SOURCE,
    points_amount: lot.kind === 'points' ? -lot.remaining : 0,
    credits_amount: lot.kind === 'credits' ? -lot.remaining : 0,
    internal_note: `Expired what was left of the ${lot.kind} granted by points event ${lot.eventId}`,
    external_note: null,
    custom_action_name: null,
    applied_at: at,
    expires_at: null,
    created_at: now,
    points_balance: points,
    credits_balance: credits,
    reverses_event_id: null,
    redemption_id: null,
  };
}

/**
 * Sweeps every shop, one bounded transaction at a time, yielding to other work between them.
 * On PostgreSQL one process sweeps at a time: a run that finds the sweep lock taken stops and
 * leaves the work to the holder. Returns the number of expiration events written.
 */
export async function sweepExpiredLots(db: DB, now: number, budget = LOTS_PER_TRANSACTION): Promise<number> {
  let written = 0;
  for (;;) {
    const work = await customersWithExpiredLots(db, now, budget);
    if (work.length === 0) return written;
    const shopId = work[0]!.shopId;
    const remoteIds = work.filter((w) => w.shopId === shopId).map((w) => w.remoteId);
    const count = await transaction(db, async (trx) =>
      (await tryTransactionLock(trx, 'expiry-sweep')) ? expireLots(trx, shopId, remoteIds, now, budget) : null,
    );
    if (count === null) return written;
    written += count;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

// Inactivity mode: see inactivity.ts. Since the period is the shop's, the customers_points_active
// index is the order in which balances fall due.

/** Customers per look-up of due balances. */
const DUE_CUSTOMERS = 100;

/**
 * Writes off the whole balance of these customers whose balance is due by `now`: every lot
 * that holds something, up to `budget` lots; a lot that expired before the balance fell due is
 * written off at its own expiry. A customer whose lots are all written off leaves the
 * inactivity index (points_active_at null) until their next posting. Returns the events
 * written and the customers finished.
 */
export async function expireInactive(
  trx: DB,
  shopId: number,
  shop: InactivityShop,
  remoteIds: readonly number[],
  now: number,
  budget = LOTS_PER_TRANSACTION,
): Promise<{ events: number; finished: number }> {
  const balances = await lockBalances(trx, shopId, remoteIds, now);
  const offs: WriteOff[] = [];
  const customers = new Map<number, number | null>();
  for (const [remoteId, balance] of balances) {
    const due = inactivityDue(shop, balance.activeAt);
    if (due === null || due > now || offs.length >= budget) continue;
    // The available balance is nothing from the instant it fell due (balances.ts), as the events show.
    const { points, credits } = balance;
    let finished = true;
    for (const kind of ['points', 'credits'] as LotKind[]) {
      const room = budget - offs.length;
      const lots = room > 0 ? await expiredLots(trx, shopId, remoteId, kind, NEVER, room) : [];
      if (lots.length === room) finished = false;
      for (const lot of lots) offs.push({ lot, at: Math.min(lot.expiresAt, due), points, credits });
    }
    customers.set(remoteId, finished ? null : balance.activeAt);
  }
  if (customers.size === 0) return { events: 0, finished: 0 };
  const events = await writeOff(trx, shopId, balances, offs, customers, now);
  return { events, finished: [...customers.values()].filter((v) => v === null).length };
}

/**
 * Writes off the balances that fell due for inactivity in every shop in that mode, found
 * through the customers_points_active index (no scan of customers or events), one bounded
 * transaction at a time. Returns the number of expiration events written.
 */
export async function sweepInactiveBalances(db: DB, now: number, budget = LOTS_PER_TRANSACTION): Promise<number> {
  let written = 0;
  for (const shop of await listShops(db)) {
    const firstDue = inactivityDue(shop, Number.MIN_SAFE_INTEGER);
    if (firstDue === null || firstDue > now) continue;
    const activeBy = now - shop.points_inactivity_days! * DAY_MS;
    for (;;) {
      const due = await customersActiveBy(db, shop.id, activeBy, DUE_CUSTOMERS);
      if (due.length === 0) break;
      const done = await transaction(db, async (trx) =>
        (await tryTransactionLock(trx, 'expiry-sweep')) ? expireInactive(trx, shop.id, shop, due, now, budget) : null,
      );
      if (done === null) return written;
      written += done.events;
      if (done.events === 0 && done.finished === 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return written;
}

/**
 * Before a posting: writes off the balances of these locked customers that fell due for
 * inactivity and the sweep has not reached yet, so that a posting never spends, nor revives,
 * what expired. Costs nothing beyond the rows unless a customer was inactive for a day or more.
 * Returns whether anything was written (then the balances must be read again).
 */
export async function expireDueBeforePosting(trx: DB, shopId: number, balances: ReadonlyMap<number, Balances>, now: number): Promise<boolean> {
  const idle = [...balances].filter(([, b]) => mayBeDue(b.activeAt, now)).map(([id]) => id);
  if (idle.length === 0) return false;
  const shop = await getShop(trx, shopId);
  const due = shop === undefined ? [] : idle.filter((id) => (inactivityDue(shop, balances.get(id)!.activeAt) ?? Infinity) <= now);
  if (due.length === 0) return false;
  await expireInactive(trx, shopId, shop!, due, now, Number.MAX_SAFE_INTEGER);
  return true;
}
