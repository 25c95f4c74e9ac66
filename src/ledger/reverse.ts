import { sql } from 'kysely';
import type { DB, LotKind } from '../db/tables.js';
import { AppError, notFound } from '../errors.js';
import { lockBalances } from './balances.js';
import { findEvent } from './events-repository.js';
import { NEVER } from './lots-repository.js';
import { postEvents } from './post.js';
import { posting, type Posted, type ReversalPlan, type StoredLotRef } from './posting.js';
import { EXPIRATION_SOURCE, REDEMPTION_SOURCE, REVERSAL_SOURCE, type PointsEvent } from './schemas.js';

// A reversal undoes one points event exactly (docs/ledger.md, "Reversals"): what a deduction
// took goes back into the very lots it came from, with their original expiry; what a grant
// gave is taken back from its own lot first, then first-expiring first from the others, never
// below zero. It is a points event of its own (source reversal), and an event is reversed at
// most once.

export interface ReverseOptions {
  internalNote?: string | null;
  externalNote?: string | null;
  /** The redemption being voided, when the reversal gives back a redemption's points. */
  redemptionId?: number | null;
}

const lotRef = (row: { id: number; kind: LotKind; remaining: number; expires_at: number | null }): StoredLotRef => ({
  id: Number(row.id),
  kind: row.kind,
  remaining: Number(row.remaining),
  key: row.expires_at === null ? NEVER : Number(row.expires_at),
});

/** How the event's reversal moves lots: the lots its deductions took, and its own lots. */
async function planOf(trx: DB, shopId: number, eventId: number): Promise<ReversalPlan> {
  const taken = await trx
    .selectFrom('lot_consumptions as c')
    .innerJoin('points_lots as l', (j) => j.onRef('l.shop_id', '=', 'c.shop_id').onRef('l.id', '=', 'c.lot_id'))
    .select(['l.id', 'l.kind', 'l.remaining', 'l.expires_at', 'c.amount'])
    .where('c.shop_id', '=', shopId)
    .where('c.event_id', '=', eventId)
    .orderBy('l.id')
    .execute();
  const own = await trx
    .selectFrom('points_lots')
    .select(['id', 'kind', 'remaining', 'expires_at'])
    .where('shop_id', '=', shopId)
    .where('event_id', '=', eventId)
    .orderBy('id')
    .execute();
  return { restores: taken.map((row) => ({ lot: lotRef(row), amount: Number(row.amount) })), own: own.map(lotRef) };
}

/**
 * Writes the reversal of an event of the shop in the caller's transaction and returns it, with
 * what the posting changed (for what follows it: earning/effects.ts).
 * Throws not_found, not_reversible (expirations and reversals), already_reversed, or
 * insufficient_balance (a grant whose points the customer no longer has).
 */
export async function reverseEvent(
  trx: DB,
  shopId: number,
  eventId: number,
  now: number,
  options: ReverseOptions = {},
): Promise<{ event: PointsEvent; posted: Posted }> {
  const original = await findEvent(trx, shopId, eventId);
  if (original === undefined) throw notFound('points event', eventId);
  if (original.source === EXPIRATION_SOURCE || original.source === REVERSAL_SOURCE) {
    throw new AppError(
      'not_reversible',
      `Points event ${eventId} is ${original.source === EXPIRATION_SOURCE ? 'an expiration' : 'a reversal'}; expirations and reversals cannot be reversed`,
    );
  }
  // A redemption's points come back by voiding it, which keeps the redemption's status true.
  if (original.source === REDEMPTION_SOURCE && options.redemptionId !== Number(original.redemption_id)) {
    throw new AppError(
      'not_reversible',
      `Points event ${eventId} paid for redemption ${Number(original.redemption_id)}; void it with POST /redemptions/${Number(original.redemption_id)}/void`,
    );
  }
  // An order's points follow the order: its refunds take them back, proportionally.
  if (original.order_remote_id !== null && original.order_remote_id !== undefined) {
    throw new AppError(
      'not_reversible',
      `Points event ${eventId} follows order ${Number(original.order_remote_id)}; send the order's refund (PUT /orders/${Number(original.order_remote_id)}) instead`,
    );
  }
  const remoteId = Number(original.customer_remote_id);
  // Under the customer's lock, two racing reversals of one event see each other.
  await lockBalances(trx, shopId, [remoteId], now);
  const { rows } = await sql<{ id: number }>`select id from points_events where shop_id = ${shopId} and reverses_event_id = ${eventId}`.execute(trx);
  if (rows.length > 0) throw new AppError('already_reversed', `Points event ${eventId} was already reversed by points event ${Number(rows[0]!.id)}`);

  const reversal = posting(
    { remoteId, email: original.email },
    {
      source: REVERSAL_SOURCE,
      points: -Number(original.points_amount),
      credits: -Number(original.credits_amount),
      internalNote: options.internalNote ?? `Reverses points event ${eventId}`,
      externalNote: options.externalNote ?? null,
      appliedAt: now,
      // A reversed grant's points were earned on its day (VIP tier windows).
      earnedAt: Number(original.applied_at),
      reversesEventId: eventId,
      redemptionId: options.redemptionId ?? original.redemption_id,
    },
  );
  const posted = await postEvents(trx, shopId, [{ ...reversal, reversal: await planOf(trx, shopId, eventId) }], now);
  const failure = posted.failures[0];
  if (failure !== undefined) {
    const kind = failure.field === 'points_amount' ? 'points' : 'credits';
    throw new AppError('insufficient_balance', `${failure.message.replace('cannot deduct', 'cannot take back')} granted by points event ${eventId}`, {
      details: [{ param: failure.field, code: failure.code, message: `The customer no longer has the ${kind} this event granted` }],
    });
  }
  return { event: posted.events[0]!, posted };
}
