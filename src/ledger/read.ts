import type { DB, LotKind } from '../db/tables.js';
import { getShop } from '../shops/repository.js';
import { lockBalances, type Balances } from './balances.js';
import { earnedSince } from './earned-days-repository.js';
import { windowStart } from './earned-window.js';
import { NEVER } from './lot-queue.js';
import { fifoLots, type FifoCursor } from './lots-repository.js';
import { lotsKey, type LotsRead } from './plan.js';
import type { Posting, PostOptions } from './posting.js';

// What a posting reads before it is planned (plan.ts): the customers' balances, locked; the
// stored lots its deductions can reach, and no further; the shop's earned window.

/**
 * Lots read per customer and kind at a time: a first few for every deducting customer at once
 * (most deductions take one or two lots), then larger chunks for those that reach further.
 */
export const FIRST_CHUNK = 8;
export const CHUNK = 64;

/**
 * The customers of the postings and of the pending changes, locked, with their balances at
 * `now`; with `resolve`, their e-mails are read in the same statement and set on the postings
 * (a customer that is not there has no balances).
 */
export async function lockPosting(
  trx: DB,
  shopId: number,
  postings: readonly Posting[],
  now: number,
  options: PostOptions,
): Promise<ReadonlyMap<number, Balances>> {
  const ids = postings.map((p) => p.customer.remoteId);
  for (const id of options.pending?.keys() ?? []) ids.push(id);
  const { locked } = options;
  if (options.resolve !== true) return locked !== undefined && ids.every((id) => locked.has(id)) ? locked : lockBalances(trx, shopId, ids, now);
  const emails = new Map<number, string | null>();
  const each = (row: Record<string, unknown>) => emails.set(Number(row.remote_id), row.email as string | null);
  const balances = await lockBalances(trx, shopId, ids, now, { columns: ['email'], each });
  for (const { customer } of postings) customer.email = emails.get(customer.remoteId) ?? null;
  return balances;
}

/** Whether any posting changes the points earned (and so the earned days and window). */
export const changesEarned = (postings: readonly Posting[]): boolean =>
  postings.some(({ entry, reversal }) => entry.points > 0 || (entry.points < 0 && (entry.clawback === true || reversal !== undefined)));

/** The first day of the shop's earned window at `now` (the shop row is read once per transaction). */
export async function earnedWindowFrom(trx: DB, shopId: number, now: number): Promise<number> {
  return windowStart((await getShop(trx, shopId))?.vip_tier_window ?? 'lifetime', now);
}

/** What customers whose stored window sum is of another window earned from `from` on. */
export async function readEarnedSince(
  trx: DB,
  shopId: number,
  postings: readonly Posting[],
  balances: ReadonlyMap<number, Balances>,
  from: number,
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (from === 0) return out;
  for (const p of postings) {
    const { remoteId } = p.customer;
    if (out.has(remoteId) || balances.get(remoteId)!.windowFrom === from || !changesEarned([p])) continue;
    out.set(remoteId, await earnedSince(trx, shopId, remoteId, from));
  }
  return out;
}

/** How far each customer's deductions of each kind can reach into their stored lots: what they deduct in all. */
export function deductionReach(
  postings: readonly Posting[],
  balances: ReadonlyMap<number, Balances>,
): Map<string, { remoteId: number; kind: LotKind; amount: number }> {
  const reach = new Map<string, { remoteId: number; kind: LotKind; amount: number }>();
  for (const { customer, entry } of postings) {
    const stored = balances.get(customer.remoteId)!.stored;
    for (const kind of ['points', 'credits'] as const) {
      const amount = kind === 'points' ? entry.points : entry.credits;
      if (amount >= 0 || stored[kind] <= 0) continue;
      const key = lotsKey(customer.remoteId, kind);
      const r = reach.get(key) ?? { remoteId: customer.remoteId, kind, amount: 0 };
      r.amount -= amount;
      reach.set(key, r);
    }
  }
  return reach;
}

/**
 * Where the next read of stored lots resumes: for every customer and kind whose lots read so
 * far are not all of them and hold less than their deductions reach.
 */
export function lotsToRead(reach: ReturnType<typeof deductionReach>, read: ReadonlyMap<string, LotsRead>, now: number): (FifoCursor & { key: string })[] {
  const out: (FifoCursor & { key: string })[] = [];
  for (const [key, { remoteId, kind, amount }] of reach) {
    const sofar = read.get(key);
    if (sofar === undefined) {
      out.push({ key, remoteId, kind, afterKey: now, afterId: NEVER });
      continue;
    }
    if (sofar.complete || sofar.lots.reduce((sum, l) => sum + l.remaining, 0) >= amount) continue;
    const last = sofar.lots[sofar.lots.length - 1]!;
    out.push({ key, remoteId, kind, afterKey: last.key, afterId: last.id });
  }
  return out;
}

/** The stored lots the postings' deductions can reach, in FIFO order: a first chunk for all at once, then further chunks where needed. */
export async function readLots(
  trx: DB,
  shopId: number,
  postings: readonly Posting[],
  balances: ReadonlyMap<number, Balances>,
  now: number,
): Promise<Map<string, LotsRead>> {
  const reach = deductionReach(postings, balances);
  const read = new Map<string, { lots: { id: number; remaining: number; key: number }[]; complete: boolean }>();
  let limit = FIRST_CHUNK;
  for (let cursors = lotsToRead(reach, read, now); cursors.length > 0; cursors = lotsToRead(reach, read, now), limit = CHUNK) {
    const got = new Map<string, { id: number; remaining: number; key: number }[]>(cursors.map((c) => [c.key, []]));
    for (const lot of await fifoLots(trx, shopId, cursors, limit)) got.get(lotsKey(lot.customerRemoteId, lot.kind))!.push(lot);
    for (const [key, lots] of got) {
      const sofar = read.get(key) ?? { lots: [], complete: false };
      sofar.lots.push(...lots);
      sofar.complete = lots.length < limit;
      read.set(key, sofar);
    }
  }
  return read;
}
