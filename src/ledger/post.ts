import { allocateIdsOf, writeRows } from '../db/dialect.js';
import type { DB, LotConsumptionsTable, LotKind, PointsEventsTable, PointsLotsTable } from '../db/tables.js';
import { enqueueEvents, wantsTopics } from '../events/outbox.js';
import { creditsToNumber, lockBalances, type Balances } from './balances.js';
import { eventJson } from './event-json.js';
import { LotQueue, type Consumption, type Lot } from './lot-queue.js';
import { fifoLots, NEVER, nextExpiries, setLotsRemaining, type NextExpiry } from './lots-repository.js';
import type { PointsEvent } from './schemas.js';
import type { WebhookTopic } from '../events/topics.js';
import { totalsWrites } from './totals.js';
import { retier, tiersOf } from '../tiers/tiers.js';
import { changeEarnedDays, dayOf } from '../tiers/window.js';

// The one way to post points events: every writer (the API, import, demo, and the programme
// around the ledger) calls postEvents inside its own transaction. It locks the customers,
// plays the events in order against their stored balances, consumes lots first-expiring
// first, and writes events, lots, consumptions and the new stored balances with a constant
// number of statements per batch. Nothing else writes lots or balances (but the sweep, which
// writes expirations off: expiry.ts).

/** One event to post, its fields valid and in storage units. */
export interface EventEntry {
  source: string;
  points: number;
  /** Hundredths of a credit. */
  credits: number;
  internalNote: string | null;
  externalNote: string | null;
  customActionName: string | null;
  appliedAt: number;
  /** When what the event grants expires; null for never, and for a pure deduction. */
  expiresAt: number | null;
  /** The event a reversal undoes. */
  reversesEventId?: number | null;
  /** The reward redemption the event spends points on, or gives them back for. */
  redemptionId?: number | null;
  /** The earning rule that wrote it. */
  earningRuleId?: number | null;
  /** The order it was earned for, or clawed back from. */
  orderRemoteId?: number | null;
  /**
   * When the points whose earning this event changes were earned, when not at appliedAt: a
   * reversed grant's applied_at, the order's grant for a refund's clawback (VIP tier windows
   * count them on that day).
   */
  earnedAt?: number;
  /**
   * A deduction that takes back what was earned (a refund's clawback): it lowers the points
   * earned, not raises the points spent.
   */
  clawback?: boolean;
}

/** A lot as stored: what it holds now and its FIFO key. */
export interface StoredLotRef {
  id: number;
  kind: LotKind;
  remaining: number;
  key: number;
}

/**
 * How a reversal moves lots (reverse.ts builds it): what the reversed event took goes back to
 * the very lots it came from, and what it granted is taken back from its own lots first.
 */
export interface ReversalPlan {
  restores: { lot: StoredLotRef; amount: number }[];
  own: StoredLotRef[];
}

export interface Posting {
  customer: { remoteId: number; email: string | null };
  entry: EventEntry;
  /** Only for a reversal, posted on its own. */
  reversal?: ReversalPlan;
}

/** A posting the balance cannot cover, by its index in the list given. */
export interface PostingFailure {
  index: number;
  field: 'points_amount' | 'credits_amount';
  code: 'insufficient_balance';
  message: string;
}

export interface Posted {
  /** Empty when every posting was covered. */
  failures: PostingFailure[];
  /** The events written, as the API shows them, in order; empty when nothing was written. */
  events: PointsEvent[];
  /** Each customer's balances after the postings (as judged, when nothing was written). */
  balances: Map<number, Balances>;
}

export interface PostOptions {
  /** Judge the postings (their failures) but write nothing: the caller already fails. */
  judgeOnly?: boolean;
  /**
   * The balances the caller already locked (lockBalances) in this transaction, for every
   * customer of the postings: they are not read again.
   */
  locked?: ReadonlyMap<number, Balances>;
}

const CREATED: WebhookTopic = 'points_event.created';

/**
 * Lots read per customer and kind at a time while a deduction consumes them: a first few for
 * every deducting customer at once (most deductions take one or two lots), then larger chunks.
 */
const FIRST_CHUNK = 8;
const CHUNK = 64;

interface CustomerState {
  remoteId: number;
  email: string | null;
  before: Balances;
  /** Available now. */
  points: number;
  credits: number;
  /** What the customer's lots hold, written-off ones excepted (the stored balance). */
  storedPoints: number;
  storedCredits: number;
  earned: number;
  spent: number;
  /** What changes the points earned, by the day they were earned (tiers/window.ts). */
  earnedDays: Map<number, number>;
  /** The points earned in the shop's tier window, and its first day, once the posting is written. */
  window: number;
  windowFrom: number;
  /** What this posting took from stored lots, for the next expiry. */
  takenStored: { key: number; kind: LotKind; amount: number }[];
  /** Whether a reversal gave something back to stored lots (the next expiry is then read again). */
  restored: boolean;
  queues: Partial<Record<LotKind, LotQueue>>;
  /** Lots granted by this posting. */
  fresh: { lot: Lot; kind: LotKind }[];
}

/**
 * Posts events in order, all or nothing. Returns the failures when a deduction is not covered
 * (then nothing is written), else the events written and the balances after them.
 */
export async function postEvents(trx: DB, shopId: number, postings: readonly Posting[], now: number, options: PostOptions = {}): Promise<Posted> {
  const states = new Map<number, CustomerState>();
  if (postings.length === 0) return { failures: [], events: [], balances: new Map() };
  // What the writes at the end need of the shop is read first: the rows locked below are held
  // to commit, and other writers of these customers queue for them.
  const writes = options.judgeOnly !== true;
  const tiers = writes && postings.some((p) => p.entry.points !== 0) ? await tiersOf(trx, shopId) : [];
  const announced = writes && (await wantsTopics(trx, shopId, [CREATED]));
  const ids = postings.map((p) => p.customer.remoteId);
  const balances = options.locked !== undefined && ids.every((id) => options.locked!.has(id)) ? options.locked : await lockBalances(trx, shopId, ids, now);
  for (const { customer } of postings) {
    if (states.has(customer.remoteId)) continue;
    const before = balances.get(customer.remoteId);
    if (before === undefined) throw new Error(`customer ${customer.remoteId} of shop ${shopId} does not exist`);
    states.set(customer.remoteId, {
      remoteId: customer.remoteId,
      email: customer.email,
      before,
      points: before.points,
      credits: before.credits,
      storedPoints: before.stored.points,
      storedCredits: before.stored.credits,
      earned: before.earnedLifetime,
      spent: before.spentLifetime,
      earnedDays: new Map(),
      window: before.earnedWindow,
      windowFrom: before.windowFrom,
      takenStored: [],
      restored: false,
      queues: {},
      fresh: [],
    });
  }

  if (postings.length > 1 && postings.some((p) => p.reversal)) throw new Error('a reversal is posted on its own');
  // One object per stored lot, however often it is read, so that what a posting took from it
  // counts wherever it is read again.
  const lotsRead = new Map<number, Lot>();
  const storedLot = (lot: { id: number; remaining: number; key: number }): Lot => {
    let out = lotsRead.get(lot.id);
    if (out === undefined) lotsRead.set(lot.id, (out = { id: lot.id, fresh: false, seq: lot.id, amount: 0, remaining: lot.remaining, key: lot.key, eventIndex: -1 }));
    return out;
  };
  const loader = (remoteId: number, kind: LotKind) => async (afterKey: number, afterId: number, limit: number) =>
    (await fifoLots(trx, shopId, [{ remoteId, kind, afterKey, afterId }], limit)).map(storedLot);
  const queueOf = (state: CustomerState, kind: LotKind): LotQueue => {
    let queue = state.queues[kind];
    if (queue === undefined) {
      const holds = kind === 'points' ? state.before.stored.points > 0 : state.before.stored.credits > 0;
      queue = state.queues[kind] = new LotQueue(now, NEVER, holds ? loader(state.remoteId, kind) : null, CHUNK);
      for (const fresh of state.fresh) if (fresh.kind === kind) queue.add(fresh.lot);
    }
    return queue;
  };
  if (writes) await preloadDeductions(trx, shopId, postings, states, queueOf, storedLot, now);

  const failures: PostingFailure[] = [];
  const planned: { posting: Posting; state: CustomerState; points: number; credits: number; consumptions: Consumption[] }[] = [];
  let seq = 0;
  for (let index = 0; index < postings.length; index++) {
    const posting = postings[index]!;
    const { entry } = posting;
    const state = states.get(posting.customer.remoteId)!;
    const short = shortfalls(state, entry, index);
    if (short.length > 0) {
      failures.push(...short);
      continue;
    }
    const writing = writes && failures.length === 0;
    const consumptions: Consumption[] = [];
    for (const kind of ['points', 'credits'] as const) {
      const amount = kind === 'points' ? entry.points : entry.credits;
      if (amount === 0) continue;
      if (kind === 'points') state.storedPoints += amount;
      else state.storedCredits += amount;
      if (posting.reversal) {
        // A reversal flips what the event it undoes counted: a grant's points come off what
        // was earned, a deduction's off what was spent.
        if (kind === 'points') {
          if (amount > 0) state.spent -= amount;
          else earned(state, entry, amount);
        }
        if (amount > 0) {
          for (const { lot: ref, amount: back } of posting.reversal.restores) {
            if (ref.kind !== kind) continue;
            const lot = storedLot(ref);
            lot.remaining += back;
            if (lot.key > now) state[kind] += back;
            consumptions.push({ lot, amount: -back });
          }
          state.restored = true;
        } else {
          state[kind] += amount;
          let left = -amount;
          for (const ref of posting.reversal.own) {
            const lot = storedLot(ref);
            if (ref.kind !== kind || lot.key <= now || lot.remaining === 0 || left === 0) continue;
            const take = Math.min(lot.remaining, left);
            lot.remaining -= take;
            left -= take;
            consumptions.push({ lot, amount: take });
            state.takenStored.push({ key: lot.key, kind, amount: take });
          }
          const taken = left > 0 ? await queueOf(state, kind).consume(left, now) : [];
          for (const c of taken) state.takenStored.push({ key: c.lot.key, kind, amount: c.amount });
          consumptions.push(...taken);
        }
        continue;
      }
      if (amount > 0) {
        if (entry.expiresAt === null || entry.expiresAt > now) state[kind] += amount;
        if (kind === 'points') earned(state, entry, amount);
        if (!writing) continue;
        const lot: Lot = { id: 0, fresh: true, seq: seq++, amount, remaining: amount, key: entry.expiresAt ?? NEVER, eventIndex: planned.length };
        state.fresh.push({ lot, kind });
        // A grant joins the customer's queue once a deduction has made one (queueOf adds the
        // grants before it): most customers of a batch only receive.
        state.queues[kind]?.add(lot);
      } else {
        state[kind] += amount;
        if (kind === 'points') {
          if (entry.clawback) earned(state, entry, amount);
          else state.spent -= amount;
        }
        if (!writing) continue;
        const taken = await queueOf(state, kind).consume(-amount, now);
        for (const c of taken) if (!c.lot.fresh) state.takenStored.push({ key: c.lot.key, kind, amount: c.amount });
        consumptions.push(...taken);
      }
    }
    if (writing) planned.push({ posting, state, points: state.points, credits: state.credits, consumptions });
  }

  const after = new Map<number, Balances>();
  if (failures.length > 0 || options.judgeOnly) {
    for (const state of states.values()) after.set(state.remoteId, balancesOf(state, state.before.stored.nextExpiry, state.before.nextExpiry));
    return { failures, events: [], balances: after };
  }

  // Every customer's row is locked already (lockBalances). What needs no new ids is written
  // first (see allocateIdsOf below).
  const touched = new Set<Lot>();
  for (const p of planned) for (const c of p.consumptions) if (!c.lot.fresh) touched.add(c.lot);
  await setLotsRemaining(trx, shopId, [...touched].map((l) => ({ id: l.id, remaining: l.remaining })));

  // The next expiry follows from what the posting took and granted, but when it emptied the
  // earliest stored lots: then the index says what expires next among them. Either way the
  // lots granted here (not written yet) are merged in.
  const known = new Map<number, NextExpiry | null>();
  for (const state of states.values()) {
    const next = storedNextAfter(state);
    if (next !== undefined) known.set(state.remoteId, mergeNext(next, state, Number.MIN_SAFE_INTEGER));
  }
  const unknown = [...states.keys()].filter((id) => !known.has(id));
  const read = await nextExpiries(trx, shopId, unknown, Number.MIN_SAFE_INTEGER);
  for (const id of unknown) known.set(id, mergeNext(read.get(id) ?? null, states.get(id)!, Number.MIN_SAFE_INTEGER));
  const earners = [...states.values()].filter((state) => state.earnedDays.size > 0);
  const { windows, write: earnedDays } = await changeEarnedDays(
    trx,
    shopId,
    earners.map(({ remoteId, before, earnedDays }) => ({ remoteId, earnedLifetime: before.earnedLifetime, earnedWindow: before.earnedWindow, windowFrom: before.windowFrom, days: earnedDays })),
    now,
  );
  for (const state of earners) {
    const { earned, from } = windows.get(state.remoteId)!;
    state.window = earned;
    state.windowFrom = from;
  }
  const stored: Record<string, unknown>[] = [];
  for (const state of states.values()) {
    const storedNext = known.get(state.remoteId) ?? null;
    // The next expiry as shown (after now): the stored one, unless it has passed already.
    const shownNext =
      storedNext === null || storedNext.at > now ? storedNext : mergeNext((await nextExpiries(trx, shopId, [state.remoteId], now)).get(state.remoteId) ?? null, state, now);
    after.set(state.remoteId, balancesOf(state, storedNext, shownNext));
    stored.push({
      shop_id: shopId,
      remote_id: state.remoteId,
      points_balance: state.storedPoints,
      credits_balance: state.storedCredits,
      points_earned_lifetime: state.earned,
      points_spent_lifetime: state.spent,
      points_earned_window: state.window,
      tier_window_from: state.windowFrom,
      next_expiry_at: storedNext?.at ?? null,
      next_expiry_points: storedNext?.points ?? 0,
      next_expiry_credits: storedNext?.credits ?? 0,
    });
  }
  await writeRows(trx, [earnedDays, { update: 'customers', key: ['shop_id', 'remote_id'], rows: stored }]);

  // allocateIdsOf takes the shop's locks on the tables' ids, held to commit, and the shop's
  // other writers queue for them: they cover the fewest round trips (the ids, one insert, the
  // webhooks' deliveries).
  const freshLots: { lot: Lot; kind: LotKind; state: CustomerState }[] = [];
  for (const state of states.values()) for (const { lot, kind } of state.fresh) freshLots.push({ lot, kind, state });
  const [eventIds, lotIds] = (await allocateIdsOf(trx, shopId, [
    ['points_events', planned.length],
    ['points_lots', freshLots.length],
  ])) as [number[], number[]];
  freshLots.forEach(({ lot }, k) => (lot.id = lotIds[k]!));

  const events: PointsEventsTable[] = planned.map((p, i) => ({
    shop_id: shopId,
    id: eventIds[i]!,
    customer_remote_id: p.state.remoteId,
    source: p.posting.entry.source,
    points_amount: p.posting.entry.points,
    credits_amount: p.posting.entry.credits,
    internal_note: p.posting.entry.internalNote,
    external_note: p.posting.entry.externalNote,
    custom_action_name: p.posting.entry.customActionName,
    applied_at: p.posting.entry.appliedAt,
    expires_at: p.posting.entry.expiresAt,
    created_at: now,
    points_balance: p.points,
    credits_balance: p.credits,
    reverses_event_id: p.posting.entry.reversesEventId ?? null,
    redemption_id: p.posting.entry.redemptionId ?? null,
    earning_rule_id: p.posting.entry.earningRuleId ?? null,
    order_remote_id: p.posting.entry.orderRemoteId ?? null,
  }));
  const lots: PointsLotsTable[] = freshLots.map(({ lot, kind, state }) => ({
    shop_id: shopId,
    id: lot.id,
    customer_remote_id: state.remoteId,
    kind,
    event_id: eventIds[lot.eventIndex]!,
    amount: lot.amount,
    remaining: lot.remaining,
    expires_at: lot.key === NEVER ? null : lot.key,
    created_at: now,
  }));
  const consumptions: LotConsumptionsTable[] = planned.flatMap((p, i) => p.consumptions.map((c) => ({ shop_id: shopId, event_id: eventIds[i]!, lot_id: c.lot.id, amount: c.amount })));
  // The report's aggregates, in the same statement (totals.ts).
  let holders = 0;
  for (const state of states.values()) holders += Number(state.storedPoints > 0) - Number(state.before.stored.points > 0);
  await writeRows(trx, [
    { insert: 'points_events', rows: events },
    { insert: 'points_lots', rows: lots },
    { insert: 'lot_consumptions', rows: consumptions },
    ...totalsWrites(trx, shopId, events, { holders }),
  ]);

  // The events as the API shows them are built when asked for: an answer or a webhook needs
  // them, an order's or a job's postings do not.
  let created: PointsEvent[] | undefined;
  const shown = () => (created ??= events.map((row, i) => eventJson(row, planned[i]!.state.email)));
  if (announced) await enqueueEvents(trx, shopId, CREATED, shown(), now);
  // Tiers follow the points earned in the window, in the same transaction.
  const retiered = earners.filter((state) => state.window !== state.before.earnedWindow);
  if (tiers.length > 0 && retiered.length > 0) {
    await retier(trx, shopId, retiered.map((state) => ({ remoteId: state.remoteId, email: state.email, earned: state.window, tierId: state.before.tierId })), now, tiers);
  }
  return {
    failures: [],
    get events() {
      return shown();
    },
    balances: after,
  };
}

/** The first chunk of lots of every customer and kind a posting deducts from, in one query. */
async function preloadDeductions(
  trx: DB,
  shopId: number,
  postings: readonly Posting[],
  states: Map<number, CustomerState>,
  queueOf: (state: CustomerState, kind: LotKind) => LotQueue,
  storedLot: (lot: { id: number; remaining: number; key: number }) => Lot,
  now: number,
): Promise<void> {
  const wanted = new Map<string, { remoteId: number; kind: LotKind }>();
  for (const { customer, entry } of postings) {
    const before = states.get(customer.remoteId)!.before.stored;
    if (entry.points < 0 && before.points > 0) wanted.set(`${customer.remoteId}:points`, { remoteId: customer.remoteId, kind: 'points' });
    if (entry.credits < 0 && before.credits > 0) wanted.set(`${customer.remoteId}:credits`, { remoteId: customer.remoteId, kind: 'credits' });
  }
  if (wanted.size === 0) return;
  const byKey = new Map<string, Lot[]>();
  for (const key of wanted.keys()) byKey.set(key, []);
  const cursors = [...wanted.values()].map((w) => ({ ...w, afterKey: now, afterId: NEVER }));
  for (const lot of await fifoLots(trx, shopId, cursors, FIRST_CHUNK)) byKey.get(`${lot.customerRemoteId}:${lot.kind}`)!.push(storedLot(lot));
  for (const { remoteId, kind } of wanted.values()) queueOf(states.get(remoteId)!, kind).preload(byKey.get(`${remoteId}:${kind}`)!, FIRST_CHUNK);
}

/** The entry changes the points earned: counted on the day they were earned (tiers/window.ts). */
function earned(state: CustomerState, entry: EventEntry, points: number): void {
  state.earned += points;
  const day = dayOf(entry.earnedAt ?? entry.appliedAt);
  state.earnedDays.set(day, (state.earnedDays.get(day) ?? 0) + points);
}

/** The deductions among `entry` that the customer's available balance cannot cover. */
function shortfalls(state: CustomerState, entry: EventEntry, index: number): PostingFailure[] {
  const out: PostingFailure[] = [];
  if (entry.points < 0 && state.points < -entry.points) {
    out.push({
      index,
      field: 'points_amount',
      code: 'insufficient_balance',
      message: `The customer has ${state.points} points available; cannot deduct ${-entry.points}`,
    });
  }
  if (entry.credits < 0 && state.credits < -entry.credits) {
    out.push({
      index,
      field: 'credits_amount',
      code: 'insufficient_balance',
      message: `The customer has ${creditsToNumber(state.credits).toFixed(2)} credits available; cannot deduct ${creditsToNumber(-entry.credits).toFixed(2)}`,
    });
  }
  return out;
}

/**
 * The stored lots' earliest expiry after what the posting took from them, or undefined when
 * the posting emptied the lots of that instant (what expires next is then unknown here).
 * Deductions take the earliest unexpired lots first, so they touch the stored next expiry
 * only by emptying it from the front.
 */
function storedNextAfter(state: CustomerState): NextExpiry | null | undefined {
  if (state.restored) return undefined;
  const next = state.before.stored.nextExpiry;
  if (next === null || state.takenStored.length === 0) return next;
  const left = { ...next };
  for (const taken of state.takenStored) {
    if (taken.key === next.at) left[taken.kind] -= taken.amount;
    else if (taken.key < next.at) throw new Error('a deduction took a lot older than the next expiry');
  }
  if (left.points > 0 || left.credits > 0) return left;
  return undefined;
}

/** A next expiry of stored lots merged with what the lots the posting granted, expiring after `after`, still hold. */
function mergeNext(next: NextExpiry | null, state: CustomerState, after: number): NextExpiry | null {
  let out = next === null ? null : { ...next };
  for (const { lot, kind } of state.fresh) {
    if (lot.key === NEVER || lot.key <= after || lot.remaining === 0) continue;
    if (out === null || lot.key < out.at) out = { at: lot.key, points: 0, credits: 0 };
    if (lot.key === out.at) out[kind] += lot.remaining;
  }
  return out;
}

function balancesOf(state: CustomerState, storedNext: NextExpiry | null, shownNext: NextExpiry | null): Balances {
  return {
    points: state.points,
    credits: state.credits,
    pending: state.before.pending,
    earnedLifetime: state.earned,
    spentLifetime: state.spent,
    earnedWindow: state.window,
    windowFrom: state.windowFrom,
    tierId: state.before.tierId,
    nextExpiry: shownNext,
    stored: { points: state.storedPoints, credits: state.storedCredits, nextExpiry: storedNext },
  };
}

