import { allocateIds, lockCustomers } from '../db/dialect.js';
import type { DB, LotConsumptionsTable, LotKind, PointsEventsTable, PointsLotsTable } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { findCustomers } from '../customers/repository.js';
import { balancesOf, creditsToNumber } from './balances.js';
import { insertEvents } from './events-repository.js';
import { eventJson } from './event-json.js';
import { LotQueue, type Consumption, type Lot } from './lot-queue.js';
import { insertConsumptions, insertLots, openLots, setLotsRemaining } from './lots-repository.js';
import { invalidEvents, type CheckedEvent, type EventDraft } from './rules.js';
import type { PointsEvent } from './schemas.js';
import { enqueueWebhookEvents } from '../webhooks/outbox.js';

// Applies points events in order, all or nothing, with a constant number of queries per batch:
// customers, then open lots (for customers who lose points) or balances (for the others) are
// read in bulk, the batch is played in memory, and events, lots and consumptions are written
// with multi-row inserts.

interface CustomerState {
  remoteId: number;
  email: string | null;
  points: number;
  credits: number;
  /** Only for customers with a deduction in the batch: nobody else's lots are read. */
  queues: Record<LotKind, LotQueue> | null;
}

interface Planned {
  draft: EventDraft;
  customer: CustomerState;
  pointsBalance: number;
  creditsBalance: number;
  consumptions: Consumption[];
}

/**
 * Applies the events (each with a draft, or the errors its fields already had). Throws a 422
 * listing every failing event when any fails, after `bodyErrors` (the batch body's own);
 * otherwise writes them all and returns them as the API shows them, in order. `batch` decides
 * the params (`points_events[3].points_amount`).
 */
export async function applyEvents(
  trx: DB,
  shopId: number,
  entries: readonly CheckedEvent[],
  now: number,
  batch: boolean,
  bodyErrors: readonly ErrorDetail[] = [],
): Promise<PointsEvent[]> {
  const prefix = (i: number) => (batch ? `points_events[${i}].` : '');
  const failures = new Map<number, ErrorDetail[]>();
  const fail = (i: number, details: readonly ErrorDetail[]) => failures.set(i, [...(failures.get(i) ?? []), ...details]);

  const drafts: (EventDraft | null)[] = entries.map((entry, i) => {
    if (entry.draft === null) fail(i, entry.errors);
    return entry.draft;
  });

  // Every valid customer_identifier is looked up, also on events whose other fields fail, so
  // customer_not_found is reported with their field errors. Balances, though, are judged only
  // for events whose fields are all valid: an invalid event's amounts mean nothing.
  const found = await findCustomers(trx, shopId, entries.flatMap((e) => (e.customerIdentifier === null ? [] : [e.customerIdentifier])));
  const states = new Map<number, CustomerState>();
  const customerOf: (CustomerState | null)[] = entries.map(({ customerIdentifier, draft }, i) => {
    if (customerIdentifier === null) return null;
    const row = found.get(customerIdentifier);
    if (row === undefined) {
      fail(i, [{ param: `${prefix(i)}customer_identifier`, code: 'customer_not_found', message: `No customer with remote_id or e-mail ${JSON.stringify(customerIdentifier)}` }]);
      return null;
    }
    if (draft === null) return null;
    const remoteId = Number(row.remote_id);
    let state = states.get(remoteId);
    if (state === undefined) states.set(remoteId, (state = { remoteId, email: row.email, points: 0, credits: 0, queues: null }));
    return state;
  });

  const remoteIds = [...states.keys()];
  await lockCustomers(trx, shopId, remoteIds);
  // Customers who lose points or credits have their open lots read, to consume them; their
  // balances are those lots' sums. The database sums the balances of everyone else.
  const deducting = new Set<CustomerState>();
  drafts.forEach((d, i) => {
    if (d && (d.points < 0 || d.credits < 0) && customerOf[i]) deducting.add(customerOf[i]!);
  });
  for (const state of deducting) state.queues = { points: new LotQueue(), credits: new LotQueue() };
  for (const lot of await openLots(trx, shopId, [...deducting].map((s) => s.remoteId), now)) {
    const state = states.get(lot.customerRemoteId)!;
    state[lot.kind] += lot.remaining;
    state.queues![lot.kind].add({
      id: lot.id, fresh: false, seq: lot.id, amount: 0, remaining: lot.remaining, expiresAt: lot.expiresAt, eventIndex: -1,
    });
  }
  const balances = await balancesOf(trx, shopId, remoteIds.filter((id) => states.get(id)!.queues === null), now);
  for (const [remoteId, balance] of balances) Object.assign(states.get(remoteId)!, balance);

  // Play the batch in order; failed events change nothing, so later ones are judged as if
  // they were absent and every failure is reported at once.
  const planned: Planned[] = [];
  const freshLots: { lot: Lot; kind: LotKind; customer: CustomerState }[] = [];
  const stored: Lot[] = [];
  drafts.forEach((draft, i) => {
    const customer = customerOf[i];
    if (!draft || !customer) return;
    const short: ErrorDetail[] = [];
    if (draft.points < 0 && customer.points < -draft.points) {
      short.push({ param: `${prefix(i)}points_amount`, code: 'insufficient_balance', message: `The customer has ${customer.points} points available; cannot deduct ${-draft.points}` });
    }
    if (draft.credits < 0 && customer.credits < -draft.credits) {
      short.push({
        param: `${prefix(i)}credits_amount`,
        code: 'insufficient_balance',
        message: `The customer has ${creditsToNumber(customer.credits).toFixed(2)} credits available; cannot deduct ${creditsToNumber(-draft.credits).toFixed(2)}`,
      });
    }
    if (short.length > 0) return fail(i, short);
    if (failures.size > 0 || bodyErrors.length > 0) {
      // Already failing: keep judging balances, but build nothing to write.
      for (const kind of ['points', 'credits'] as const) applyKind(customer, kind, draft, i, now, null, null);
      return;
    }
    const consumptions: Consumption[] = [];
    for (const kind of ['points', 'credits'] as const) applyKind(customer, kind, draft, i, now, consumptions, freshLots);
    planned.push({ draft, customer, pointsBalance: customer.points, creditsBalance: customer.credits, consumptions });
  });

  if (failures.size > 0 || bodyErrors.length > 0) {
    const details = [...bodyErrors, ...[...failures.entries()].sort(([a], [b]) => a - b).flatMap(([, d]) => d)];
    throw invalidEvents(details, batch ? failures.size : null, bodyErrors.length);
  }

  const eventIds = await allocateIds(trx, shopId, 'points_events', planned.length);
  const lotIds = await allocateIds(trx, shopId, 'points_lots', freshLots.length);
  freshLots.forEach((f, k) => (f.lot.id = lotIds[k]!));

  const events: PointsEventsTable[] = planned.map((p, i) => ({
    shop_id: shopId,
    id: eventIds[i]!,
    customer_remote_id: p.customer.remoteId,
    source: p.draft.source,
    points_amount: p.draft.points,
    credits_amount: p.draft.credits,
    internal_note: p.draft.internalNote,
    external_note: p.draft.externalNote,
    custom_action_name: p.draft.customActionName,
    applied_at: p.draft.appliedAt,
    expires_at: p.draft.expiresAt,
    created_at: now,
    points_balance: p.pointsBalance,
    credits_balance: p.creditsBalance,
  }));
  const lots: PointsLotsTable[] = freshLots.map(({ lot, kind, customer }) => ({
    shop_id: shopId,
    id: lot.id,
    customer_remote_id: customer.remoteId,
    kind,
    event_id: eventIds[lot.eventIndex]!,
    amount: lot.amount,
    remaining: lot.remaining,
    expires_at: lot.expiresAt,
    created_at: now,
  }));
  const consumptions: LotConsumptionsTable[] = planned.flatMap((p, i) =>
    p.consumptions.map((c) => {
      if (!c.lot.fresh) stored.push(c.lot);
      return { shop_id: shopId, event_id: eventIds[i]!, lot_id: c.lot.id, amount: c.amount };
    }),
  );

  await insertEvents(trx, events);
  await insertLots(trx, lots);
  await insertConsumptions(trx, consumptions);
  await setLotsRemaining(trx, shopId, [...new Set(stored)].map((l) => ({ id: l.id, remaining: l.remaining })));

  const created = events.map((row, i) => eventJson(row, planned[i]!.customer.email));
  await enqueueWebhookEvents(trx, shopId, 'points_event.created', created, now);
  return created;
}

/**
 * Moves one kind (points or credits) of one event: a grant adds a lot (live unless it is
 * already past its expiry), a deduction consumes lots. `out` and `fresh` are null when the
 * batch already fails and only the balances matter.
 */
function applyKind(
  customer: CustomerState,
  kind: LotKind,
  draft: EventDraft,
  eventIndex: number,
  now: number,
  out: Consumption[] | null,
  fresh: { lot: Lot; kind: LotKind; customer: CustomerState }[] | null,
): void {
  const amount = kind === 'points' ? draft.points : draft.credits;
  if (amount > 0) {
    const live = draft.expiresAt === null || draft.expiresAt > now;
    if (live) customer[kind] += amount;
    const lot: Lot = { id: 0, fresh: true, seq: fresh?.length ?? 0, amount, remaining: amount, expiresAt: draft.expiresAt, eventIndex };
    fresh?.push({ lot, kind, customer });
    customer.queues?.[kind].add(lot);
  } else if (amount < 0) {
    customer[kind] += amount;
    const taken = customer.queues![kind].consume(-amount, now);
    out?.push(...taken);
  }
}
