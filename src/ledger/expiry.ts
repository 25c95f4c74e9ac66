import { allocateIds, transaction, tryTransactionLock, updateRows, writeRows } from '../db/dialect.js';
import type { DB, LotKind, PointsEventsTable } from '../db/tables.js';
import { findCustomers } from '../customers/repository.js';
import { enqueueEvents, wantsTopics } from '../events/outbox.js';
import type { WebhookTopic } from '../events/topics.js';
import { lockBalances } from './balances.js';
import { eventJson } from './event-json.js';
import { customersWithExpiredLots, expiredLots, nextExpiries, setLotsRemaining, type ExpiredLot } from './lots-repository.js';
import { EXPIRATION_SOURCE } from './schemas.js';
import { totalsWrites } from './totals.js';

// The expiry sweep writes an `expiration` event for every lot that expired with something
// left, so the ledger explains every change of balance. Balances never wait for it: a read
// already leaves out expired lots (balances.ts). It works in bounded transactions (at most
// LOTS_PER_TRANSACTION lots each), so a backlog of a million lots never holds the database
// for longer than one of them.

/** Lots written off per transaction: on SQLite a few milliseconds of work. */
export const LOTS_PER_TRANSACTION = 200;

const EXPIRED: WebhookTopic = 'points_event.expired';

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

  // What needs no new ids is written, and the webhooks read, first, as postEvents does: the
  // shop's lock on event ids is held from allocateIds to commit.
  await setLotsRemaining(
    trx,
    shopId,
    lots.map((lot) => ({ id: lot.id, remaining: 0 })),
  );

  const touched = [...new Set(lots.map((l) => l.customerRemoteId))];
  /** The points written off a customer. */
  const written = (remoteId: number) => lots.reduce((sum, l) => (l.customerRemoteId === remoteId && l.kind === 'points' ? sum + l.remaining : sum), 0);
  const next = await nextExpiries(trx, shopId, touched, Number.MIN_SAFE_INTEGER);
  await updateRows(
    trx,
    'customers',
    ['shop_id', 'remote_id'],
    touched.map((remoteId) => {
      const stored = balances.get(remoteId)!.stored;
      const mine = lots.filter((l) => l.customerRemoteId === remoteId);
      const written = (kind: LotKind) => mine.reduce((sum, l) => (l.kind === kind ? sum + l.remaining : sum), 0);
      const nextExpiry = next.get(remoteId) ?? null;
      return {
        shop_id: shopId,
        remote_id: remoteId,
        points_balance: stored.points - written('points'),
        credits_balance: stored.credits - written('credits'),
        next_expiry_at: nextExpiry?.at ?? null,
        next_expiry_points: nextExpiry?.points ?? 0,
        next_expiry_credits: nextExpiry?.credits ?? 0,
        // The write-off shows as a new next_expiry (docs/pagination.md, "updated_at").
        updated_at: now,
      };
    }),
  );

  // The webhooks show each customer's e-mail.
  const emails = (await wantsTopics(trx, shopId, [EXPIRED])) ? await findCustomers(trx, shopId, touched.map(String)) : null;
  const ids = await allocateIds(trx, shopId, 'points_events', lots.length);
  const events: PointsEventsTable[] = lots.map((lot, i) => {
    // Writing off expired lots changes what is stored, not what is available.
    const balance = balances.get(lot.customerRemoteId)!;
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
      reverses_event_id: null,
      redemption_id: null,
    };
  });
  // The report's aggregates, in the same statement (totals.ts).
  let holders = 0;
  for (const remoteId of touched) {
    const points = balances.get(remoteId)!.stored.points;
    holders += Number(points - written(remoteId) > 0) - Number(points > 0);
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
