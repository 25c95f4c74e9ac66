import type { RowWrite } from '../db/dialect.js';
import type { LotKind } from '../db/tables.js';
import type { Balances } from './balances.js';
import type { PointsEvent } from './schemas.js';

// What is asked of the ledger, and what it answers: the postings (one event each, with its
// customer), the failures a posting may meet, and what a written posting changed.

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
  /** The campaign the order earned under (the programme decides it; the ledger only links it). */
  campaignId?: number | null;
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

export interface PostingCustomer {
  remoteId: number;
  email: string | null;
}

export interface Posting {
  customer: PostingCustomer;
  entry: EventEntry;
  /** Only for a reversal, posted on its own. */
  reversal?: ReversalPlan;
}

/** What an entry needs said; every other field has its usual value (null, nothing linked). */
export type EntryFields = Pick<EventEntry, 'source' | 'points' | 'appliedAt'> & Partial<EventEntry>;

/** One posting, its entry's unsaid fields null: the one way the programme spells a posting. */
export function posting(customer: PostingCustomer, fields: EntryFields): Posting {
  return {
    customer,
    entry: { credits: 0, internalNote: null, externalNote: null, customActionName: null, expiresAt: null, ...fields },
  };
}

/**
 * A posting the balance cannot cover, or (PostOptions.resolve) whose customer does not exist,
 * by its index in the list given.
 */
export type PostingFailure =
  | { index: number; field: 'points_amount' | 'credits_amount'; code: 'insufficient_balance'; message: string }
  | { index: number; field: 'customer_identifier'; code: 'customer_not_found'; message: string };

/** A customer a posting changed: their balances before and after it. */
export interface CustomerChange {
  remoteId: number;
  email: string | null;
  before: Balances;
  after: Balances;
}

export interface Posted {
  /** Empty when every posting was covered. */
  failures: PostingFailure[];
  /** The events written, as the API shows them, in order; empty when nothing was written. */
  events: PointsEvent[];
  /** Each customer's balances after the postings (as judged, when nothing was written). */
  balances: Map<number, Balances>;
  /** The customers written, in the order first posted to (none when nothing was written). */
  changed: CustomerChange[];
}

export interface PostOptions {
  /** Judge the postings (their failures) but write nothing: the caller already fails. */
  judgeOnly?: boolean;
  /**
   * The balances the caller already locked (lockBalances) in this transaction, for every
   * customer of the postings: they are not read again.
   */
  locked?: ReadonlyMap<number, Balances>;
  /**
   * The postings' customers are as a request named them, by remote id, not known to exist:
   * their e-mails are read with their lock (one read of the customers, not two) and set on the
   * postings, and a posting whose customer is not there fails (customer_not_found), judged with
   * the others, instead of throwing.
   */
  resolve?: boolean;
  /**
   * Changes to customers' pending points (earned, not spendable yet), written with their
   * balances; a customer here need not have a posting.
   */
  pending?: ReadonlyMap<number, number>;
  /** A row of another table written with the events (a redemption): see Alongside. */
  alongside?: Alongside;
  /**
   * The caller's rows written with the balances, in their statement (an aggregate the
   * programme keeps beside the ledger: the order days of a tier metric).
   */
  writes?: readonly RowWrite[];
  /**
   * Other columns of customers, set with their balances in the same update: every customer
   * here that the plan writes (those of the postings and of `pending`; `Posted.changed` names
   * them) gets these, and every customer the plan writes must be here when it is given, with
   * the same columns.
   */
  columns?: ReadonlyMap<number, Record<string, unknown>>;
}

/**
 * Rows written in the events' statement. A row of a table whose ids are the shop's (a
 * redemption) takes its id with theirs, after them: one statement takes the shop's locks on both
 * tables' ids, held to commit, so a writer of such rows queues for them no longer than a plain
 * posting does. A row whose id is its table's own sequence (the request's audit entry, which
 * names the events' range) names no table and takes none. `rows` is given the new id and the
 * events' ids before the events' rows are made, so an entry may take the id.
 */
export type Alongside =
  | { table: 'redemptions'; rows(id: number, eventIds: readonly number[]): RowWrite[] }
  | { table?: undefined; rows(id: undefined, eventIds: readonly number[]): RowWrite[] };
