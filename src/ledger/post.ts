import type { DB } from '../db/tables.js';
import { wantsTopics } from '../events/outbox.js';
import { NO_BALANCES, type Balances } from './balances.js';
import { balancesAfter, planPostings, type LedgerPlan, type PlanInput } from './plan.js';
import type { Posted, Posting, PostingFailure, PostOptions } from './posting.js';
import { changesEarned, earnedWindowFrom, lockPosting, readEarnedSince, readLots } from './read.js';
import { writePlan } from './write.js';
import { expireDueBeforePosting } from './expiry.js';

// The one way to post points events: every writer (the API, import, demo, and the programme
// around the ledger) calls postEvents inside its own transaction. It reads (read.ts: the
// customers locked, the lots the deductions reach), plans (plan.ts: pure arithmetic), writes
// (write.ts: a constant number of statements per batch) and says what changed. Nothing else
// writes lots or balances (but the sweep, which writes expirations off: expiry.ts). What
// follows a posting (tiers, referrals) is the programme's, called by whoever posts.

export type { EventEntry, Posted, Posting, PostingFailure, PostOptions, ReversalPlan, StoredLotRef } from './posting.js';

const NOTHING: Posted = Object.freeze({ failures: [], events: [], balances: new Map(), changed: [] }) as Posted;

/**
 * Posts events in order, all or nothing. Returns the failures when a deduction is not covered
 * (then nothing is written), else the events written and the balances after them.
 */
export async function postEvents(trx: DB, shopId: number, postings: readonly Posting[], now: number, options: PostOptions = {}): Promise<Posted> {
  if (postings.length === 0 && (options.pending?.size ?? 0) === 0) return { ...NOTHING, balances: new Map() };
  const writes = options.judgeOnly !== true;
  // What the writes read of the shop is read first: the rows locked below are held to commit,
  // and other writers of these customers queue for them.
  const announced = writes && (await wantsTopics(trx, shopId, ['points_event.created']));
  const from = writes && changesEarned(postings) ? await earnedWindowFrom(trx, shopId, now) : 0;
  let balances = await lockPosting(trx, shopId, postings, now, options);
  if (options.resolve === true && postings.some((p) => !balances.has(p.customer.remoteId))) return withoutAbsent(postings, balances, now, options.pending);
  if (writes && (await expireDueBeforePosting(trx, shopId, balances, now)))
    balances = await lockPosting(trx, shopId, postings, now, { ...options, locked: undefined });
  const input: PlanInput = { now, postings, balances, lots: null, window: { from, earnedSince: new Map() }, pending: options.pending };
  // Only deductions can fail; judged first, so that a failing batch reads no lots.
  if (!writes || postings.some((p) => p.entry.points < 0 || p.entry.credits < 0)) {
    const judged = planPostings(input);
    if (!writes || judged.failures.length > 0) return { failures: judged.failures, events: [], balances: judgedBalances(judged), changed: [] };
  }
  const lots = await readLots(trx, shopId, postings, balances, now);
  const earnedSince = await readEarnedSince(trx, shopId, postings, balances, from);
  const plan = planPostings({ ...input, lots, window: { from, earnedSince } });
  const written = await writePlan(trx, shopId, plan, now, { announced, alongside: options.alongside, writes: options.writes, columns: options.columns });
  return {
    failures: [],
    get events() {
      return written.events();
    },
    balances: written.balances,
    changed: plan.customers.map((c) => ({ remoteId: c.remoteId, email: c.email, before: c.before, after: written.balances.get(c.remoteId) ?? NO_BALANCES })),
  };
}

/**
 * Postings whose customer is not there (PostOptions.resolve) fail, the others are judged as
 * ever, so that one answer names every failure; nothing is written.
 */
function withoutAbsent(postings: readonly Posting[], balances: ReadonlyMap<number, Balances>, now: number, pending: PostOptions['pending']): Posted {
  const failures: PostingFailure[] = [];
  const kept: number[] = [];
  postings.forEach(({ customer }, index) => {
    if (balances.has(customer.remoteId)) kept.push(index);
    else failures.push({ index, field: 'customer_identifier', code: 'customer_not_found', message: `No customer with remote_id ${customer.remoteId}` });
  });
  const judged = planPostings({ now, postings: kept.map((i) => postings[i]!), balances, lots: null, window: { from: 0, earnedSince: new Map() }, pending });
  for (const failure of judged.failures) failures.push({ ...failure, index: kept[failure.index]! });
  failures.sort((a, b) => a.index - b.index);
  return { failures, events: [], balances: judgedBalances(judged), changed: [] };
}

/** The balances as judged: nothing written, so the next expiries are those read. */
function judgedBalances(plan: LedgerPlan): Map<number, Balances> {
  return new Map(plan.customers.map((c) => [c.remoteId, balancesAfter({ ...c, pending: c.before.pending }, c.before.stored.nextExpiry, c.before.nextExpiry)]));
}
