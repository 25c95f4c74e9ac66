import type { LotKind } from '../db/tables.js';
import { creditsToNumber, type Balances } from './balances.js';
import { dayOf } from './earned-window.js';
import { LotQueue, NEVER, type Consumption, type Lot } from './lot-queue.js';
import type { NextExpiry } from './lots-repository.js';
import type { EventEntry, Posting, PostingFailure } from './posting.js';

// The ledger's arithmetic, with no database: given the balances and open lots a posting read,
// and the postings asked for, it plays the postings in order and says what to write (events,
// lots, consumptions, stored lots' new remainders, each customer's new balances and points
// earned by day), or which postings the balances cannot cover. read.ts reads what it needs,
// write.ts writes what it returns (docs/ledger.md).

/** The stored lots read for one customer and kind, in FIFO order: a prefix of their open lots. */
export interface LotsRead {
  lots: readonly { id: number; remaining: number; key: number }[];
  /** The lots are all the customer's open lots of the kind (else only as many as deductions can reach). */
  complete: boolean;
}

export const lotsKey = (remoteId: number, kind: LotKind): string => `${remoteId}:${kind}`;

export interface PlanInput {
  now: number;
  postings: readonly Posting[];
  /** Every customer's balances at `now` (postings' and pending's), as locked. */
  balances: ReadonlyMap<number, Balances>;
  /** The stored lots read, by lotsKey. Null: judge the postings only (nothing to write is planned). */
  lots: ReadonlyMap<string, LotsRead> | null;
  /**
   * The first day of the shop's earned window now, and for customers whose stored window sum
   * is of another window, what they earned from that day on (earned days as stored).
   */
  window: { from: number; earnedSince: ReadonlyMap<number, number> };
  /** Changes to customers' pending points. */
  pending?: ReadonlyMap<number, number>;
}

/** An event to write, with the customer's available balances once it is applied. */
export interface PlannedEvent {
  posting: Posting;
  pointsBalance: number;
  creditsBalance: number;
}

/** A lot granted by the plan; the writer gives `lot` its id. */
export interface PlannedLot {
  lot: Lot;
  kind: LotKind;
  remoteId: number;
}

export interface PlannedConsumption {
  eventIndex: number;
  lot: Lot;
  /** Taken from the lot; negative for what a reversal gives back. */
  amount: number;
}

/** One customer's ledger after the plan. */
export interface CustomerPlan {
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
  pending: number;
  /** What changes the points earned, by the day they were earned. */
  earnedDays: Map<number, number>;
  /** The points earned from windowFrom on. */
  window: number;
  windowFrom: number;
  /**
   * The stored lots' earliest expiry after the plan, or undefined when the plan emptied or
   * refilled the lots of the earliest instant: then the writer reads it, once the lots'
   * remainders are written. The lots the plan grants are not in it (see nextExpiryWith).
   */
  storedNext: NextExpiry | null | undefined;
  /** Lots granted to the customer by the plan. */
  fresh: PlannedLot[];
}

export interface LedgerPlan {
  /** Non-empty when a posting is not covered: then nothing is to be written, and the rest only judges. */
  failures: PostingFailure[];
  /** In posting order (failing postings left out, and all of them when judging only). */
  events: PlannedEvent[];
  /** In the order of the customers, then of their grants. */
  lots: PlannedLot[];
  consumptions: PlannedConsumption[];
  /** Stored lots whose remainder the plan changed. */
  storedLots: Lot[];
  /** In the order each customer first appears (postings, then pending). */
  customers: CustomerPlan[];
}

/** What one customer's plan carries while the postings are played. */
interface State extends CustomerPlan {
  takenStored: { key: number; kind: LotKind; amount: number }[];
  restored: boolean;
  queues: Partial<Record<LotKind, LotQueue>>;
}

/** Plays the postings in order: see LedgerPlan. Throws when a customer's balances are missing. */
export function planPostings(input: PlanInput): LedgerPlan {
  const { now, postings } = input;
  if (postings.length > 1 && postings.some((p) => p.reversal)) throw new Error('a reversal is posted on its own');
  const states = statesOf(input);
  const lotsOf = storedLots(input.lots);
  const plan: LedgerPlan = { failures: [], events: [], lots: [], consumptions: [], storedLots: [], customers: [...states.values()] };
  let seq = 0;
  for (let index = 0; index < postings.length; index++) {
    const posting = postings[index]!;
    const state = states.get(posting.customer.remoteId)!;
    const short = shortfalls(state, posting.entry, index);
    if (short.length > 0) {
      plan.failures.push(...short);
      continue;
    }
    const writing = lotsOf !== null && plan.failures.length === 0;
    const eventIndex = plan.events.length;
    const step = { state, posting, writing, eventIndex, now, lotsOf, consumptions: [] as Consumption[] };
    for (const kind of ['points', 'credits'] as const) {
      const amount = kind === 'points' ? posting.entry.points : posting.entry.credits;
      if (amount === 0) continue;
      if (kind === 'points') state.storedPoints += amount;
      else state.storedCredits += amount;
      if (posting.reversal) reverse(step, kind, amount);
      else if (amount > 0) grant(step, kind, amount, seq++);
      else deduct(step, kind, amount);
    }
    if (!writing) continue;
    plan.events.push({ posting, pointsBalance: state.points, creditsBalance: state.credits });
    for (const c of step.consumptions) plan.consumptions.push({ eventIndex, lot: c.lot, amount: c.amount });
  }
  if (plan.failures.length > 0 || lotsOf === null) return { ...plan, events: [], consumptions: [] };
  finish(plan, states, input.window);
  return plan;
}

function statesOf(input: PlanInput): Map<number, State> {
  const states = new Map<number, State>();
  const add = (remoteId: number, email: string | null) => {
    if (states.has(remoteId)) return;
    const before = input.balances.get(remoteId);
    if (before === undefined) throw new Error(`customer ${remoteId} was not read`);
    states.set(remoteId, {
      remoteId,
      email,
      before,
      points: before.points,
      credits: before.credits,
      storedPoints: before.stored.points,
      storedCredits: before.stored.credits,
      earned: before.earnedLifetime,
      spent: before.spentLifetime,
      pending: before.pending + (input.pending?.get(remoteId) ?? 0),
      earnedDays: new Map(),
      window: before.earnedWindow,
      windowFrom: before.windowFrom,
      storedNext: before.stored.nextExpiry,
      fresh: [],
      takenStored: [],
      restored: false,
      queues: {},
    });
  };
  for (const { customer } of input.postings) add(customer.remoteId, customer.email);
  // A pending change of a customer who is not there (none was read) changes nothing, as an update of no row.
  for (const remoteId of input.pending?.keys() ?? []) if (input.balances.has(remoteId)) add(remoteId, null);
  return states;
}

/**
 * The stored lots as the plan moves them: one object per lot, however often it is read (a
 * reversal's own lots are also in the FIFO order), so that what one posting took counts
 * wherever it is read again.
 */
function storedLots(read: ReadonlyMap<string, LotsRead> | null) {
  if (read === null) return null;
  const lots = new Map<number, Lot>();
  const lot = (ref: { id: number; remaining: number; key: number }): Lot => {
    let out = lots.get(ref.id);
    if (out === undefined)
      lots.set(ref.id, (out = { id: ref.id, fresh: false, seq: ref.id, amount: 0, remaining: ref.remaining, key: ref.key, eventIndex: -1 }));
    return out;
  };
  const queue = (state: State, kind: LotKind): LotQueue => {
    let q = state.queues[kind];
    if (q === undefined) {
      const given = read.get(lotsKey(state.remoteId, kind));
      const holds = (kind === 'points' ? state.before.stored.points : state.before.stored.credits) > 0;
      if (given === undefined && holds) throw new Error(`the ${kind} lots of customer ${state.remoteId} were not read`);
      q = state.queues[kind] = new LotQueue(given?.lots.map(lot) ?? [], given?.complete ?? true);
      // A grant joins the customer's queue once a deduction has made one: most customers of a
      // batch only receive.
      for (const fresh of state.fresh) if (fresh.kind === kind) q.add(fresh.lot);
    }
    return q;
  };
  return { lot, queue, all: lots };
}

interface Step {
  state: State;
  posting: Posting;
  writing: boolean;
  eventIndex: number;
  now: number;
  lotsOf: ReturnType<typeof storedLots>;
  consumptions: Consumption[];
}

function grant({ state, posting, writing, eventIndex, now }: Step, kind: LotKind, amount: number, seq: number): void {
  const { entry } = posting;
  if (entry.expiresAt === null || entry.expiresAt > now) state[kind] += amount;
  if (kind === 'points') earned(state, entry, amount);
  if (!writing) return;
  const lot: Lot = { id: 0, fresh: true, seq, amount, remaining: amount, key: entry.expiresAt ?? NEVER, eventIndex };
  state.fresh.push({ lot, kind, remoteId: state.remoteId });
  state.queues[kind]?.add(lot);
}

function deduct({ state, posting, writing, now, lotsOf, consumptions }: Step, kind: LotKind, amount: number): void {
  state[kind] += amount;
  if (kind === 'points') {
    if (posting.entry.clawback) earned(state, posting.entry, amount);
    else state.spent -= amount;
  }
  if (!writing) return;
  const taken = lotsOf!.queue(state, kind).consume(-amount, now);
  for (const c of taken) if (!c.lot.fresh) state.takenStored.push({ key: c.lot.key, kind, amount: c.amount });
  consumptions.push(...taken);
}

/**
 * A reversal flips what the event it undoes counted (a grant's points come off what was
 * earned, a deduction's off what was spent) and moves lots as its ReversalPlan says.
 */
function reverse({ state, posting, writing, now, lotsOf, consumptions }: Step, kind: LotKind, amount: number): void {
  const plan = posting.reversal!;
  if (kind === 'points') {
    if (amount > 0) state.spent -= amount;
    else earned(state, posting.entry, amount);
  }
  if (amount > 0) {
    // Counted as available as the restored lots are live; judging alone has no lots.
    if (!writing) {
      for (const { lot, amount: back } of plan.restores) if (lot.kind === kind && lot.key > now) state[kind] += back;
      return;
    }
    for (const { lot: ref, amount: back } of plan.restores) {
      if (ref.kind !== kind) continue;
      const lot = lotsOf!.lot(ref);
      lot.remaining += back;
      if (lot.key > now) state[kind] += back;
      consumptions.push({ lot, amount: -back });
    }
    state.restored = true;
    return;
  }
  state[kind] += amount;
  if (!writing) return;
  let left = -amount;
  for (const ref of plan.own) {
    const lot = lotsOf!.lot(ref);
    if (ref.kind !== kind || lot.key <= now || lot.remaining === 0 || left === 0) continue;
    const take = Math.min(lot.remaining, left);
    lot.remaining -= take;
    left -= take;
    consumptions.push({ lot, amount: take });
    state.takenStored.push({ key: lot.key, kind, amount: take });
  }
  const taken = left > 0 ? lotsOf!.queue(state, kind).consume(left, now) : [];
  for (const c of taken) state.takenStored.push({ key: c.lot.key, kind, amount: c.amount });
  consumptions.push(...taken);
}

/** The entry changes the points earned: counted on the day they were earned. */
function earned(state: State, entry: EventEntry, points: number): void {
  state.earned += points;
  const day = dayOf(entry.earnedAt ?? entry.appliedAt);
  state.earnedDays.set(day, (state.earnedDays.get(day) ?? 0) + points);
}

/** The deductions among `entry` that the customer's available balance cannot cover. */
function shortfalls(state: State, entry: EventEntry, index: number): PostingFailure[] {
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

/** The lots, stored lots' remainders, window sums and next expiries of a covered plan. */
function finish(plan: LedgerPlan, states: Map<number, State>, window: PlanInput['window']): void {
  const touched = new Set<Lot>();
  for (const c of plan.consumptions) if (!c.lot.fresh) touched.add(c.lot);
  plan.storedLots = [...touched];
  for (const state of states.values()) {
    plan.lots.push(...state.fresh);
    state.storedNext = storedNextAfter(state);
    if (state.earnedDays.size === 0) continue;
    const { remoteId, before } = state;
    let sum: number;
    if (before.windowFrom === window.from) sum = before.earnedWindow;
    else if (window.from === 0) sum = before.earnedLifetime;
    else {
      const since = window.earnedSince.get(remoteId);
      if (since === undefined) throw new Error(`what customer ${remoteId} earned since day ${window.from} was not read`);
      sum = since;
    }
    for (const [day, points] of state.earnedDays) if (day >= window.from) sum += points;
    state.window = sum;
    state.windowFrom = window.from;
  }
}

/**
 * The stored lots' earliest expiry after what the plan took from them, or undefined when it
 * emptied the lots of that instant or gave back to lots (what expires next is then unknown
 * here). Deductions take the earliest unexpired lots first, so they touch the stored next
 * expiry only by emptying it from the front.
 */
function storedNextAfter(state: State): NextExpiry | null | undefined {
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

/** A next expiry of stored lots merged with what the lots the plan granted, expiring after `after`, still hold. */
export function nextExpiryWith(next: NextExpiry | null, fresh: readonly PlannedLot[], after: number): NextExpiry | null {
  let out = next === null ? null : { ...next };
  for (const { lot, kind } of fresh) {
    if (lot.key === NEVER || lot.key <= after || lot.remaining === 0) continue;
    if (out === null || lot.key < out.at) out = { at: lot.key, points: 0, credits: 0 };
    if (lot.key === out.at) out[kind] += lot.remaining;
  }
  return out;
}

/** A customer's balances after the plan, with the next expiries the writer settled and the activity time it stored. */
export function balancesAfter(c: CustomerPlan, storedNext: NextExpiry | null, shownNext: NextExpiry | null, activeAt = c.before.activeAt): Balances {
  return {
    points: c.points,
    credits: c.credits,
    pending: c.pending,
    earnedLifetime: c.earned,
    spentLifetime: c.spent,
    earnedWindow: c.window,
    windowFrom: c.windowFrom,
    tierId: c.before.tierId,
    nextExpiry: shownNext,
    activeAt,
    stored: { points: c.storedPoints, credits: c.storedCredits, nextExpiry: storedNext },
  };
}
