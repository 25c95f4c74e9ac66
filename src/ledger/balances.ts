import { sql } from 'kysely';
import { lockedRows, perKey } from '../db/dialect.js';
import type { CustomersTable, DB } from '../db/tables.js';
import { getShop } from '../shops/repository.js';
import { inactivityDue, mayBeDue } from './inactivity.js';
import { CUSTOMER, expiredSumSql, nextExpiryAmountSql, nextExpirySql, toNextExpiry, type NextExpiry } from './lots-repository.js';

// A customer's balances, stored on the customer row and changed in the transaction of every
// event (docs/ledger.md). The stored points and credits still hold lots that expired since
// the last sweep; next_expiry_at says at once whether there are any. Only then are the lots
// read, and only the expired ones and the next to expire, through the FIFO index.

/** The customer columns the ledger keeps. */
export const BALANCE_COLUMNS = [
  'points_balance',
  'credits_balance',
  'points_pending',
  'points_earned_lifetime',
  'points_spent_lifetime',
  'points_earned_window',
  'tier_window_from',
  'vip_tier_id',
  'next_expiry_at',
  'next_expiry_points',
  'next_expiry_credits',
  'points_active_at',
] as const;

export type StoredColumns = {
  [K in (typeof BALANCE_COLUMNS)[number]]: K extends 'next_expiry_at' | 'vip_tier_id' | 'points_active_at' ? number | null : number;
};

/** A customer's ledger as it stands at one instant. */
export interface Balances {
  /** Available now: what unexpired lots hold. */
  points: number;
  /** Hundredths of a credit available now. */
  credits: number;
  /** Earned but not spendable yet. */
  pending: number;
  earnedLifetime: number;
  spentLifetime: number;
  /** The points earned from windowFrom on (the shop's VIP tier window, as last summed). */
  earnedWindow: number;
  windowFrom: number;
  /** The VIP tier held (changed only by tiers/, after the ledger's write). */
  tierId: number | null;
  /** The earliest expiry after now, and what expires then. */
  nextExpiry: NextExpiry | null;
  /** The last posting's time (the inactivity clock: expiry.ts); null once written off for inactivity, or never posted to. */
  activeAt: number | null;
  /** As stored: what the lots hold, expired ones not yet written off included. */
  stored: { points: number; credits: number; nextExpiry: NextExpiry | null };
}

export const NO_BALANCES: Readonly<Balances> = Object.freeze({
  points: 0,
  credits: 0,
  pending: 0,
  earnedLifetime: 0,
  spentLifetime: 0,
  earnedWindow: 0,
  windowFrom: 0,
  tierId: null,
  nextExpiry: null,
  activeAt: null,
  stored: { points: 0, credits: 0, nextExpiry: null },
});

/** True when something may have expired since the row was written: its lots must be looked at. */
export function isStale(row: StoredColumns, now: number): boolean {
  return row.next_expiry_at !== null && Number(row.next_expiry_at) <= now;
}

/** The balances of a row that is not stale: exactly what is stored. */
function fromStored(row: StoredColumns): Balances {
  const nextExpiry = toNextExpiry(row.next_expiry_at, row.next_expiry_points, row.next_expiry_credits);
  const points = Number(row.points_balance);
  const credits = Number(row.credits_balance);
  return {
    points,
    credits,
    pending: Number(row.points_pending),
    earnedLifetime: Number(row.points_earned_lifetime),
    spentLifetime: Number(row.points_spent_lifetime),
    earnedWindow: Number(row.points_earned_window),
    windowFrom: Number(row.tier_window_from),
    tierId: row.vip_tier_id === null || row.vip_tier_id === undefined ? null : Number(row.vip_tier_id),
    nextExpiry,
    activeAt: row.points_active_at === null || row.points_active_at === undefined ? null : Number(row.points_active_at),
    stored: { points, credits, nextExpiry },
  };
}

type CorrectedRow = StoredColumns & { expired_points: number; expired_credits: number; next_at: number | null; next_points: number; next_credits: number };

/**
 * The customers' columns read again together with what expired since and the next expiry,
 * in one statement (one snapshot).
 */
async function corrected(db: DB, shopId: number, remoteIds: readonly number[], now: number): Promise<Map<number, Balances>> {
  const columns = sql.raw(BALANCE_COLUMNS.map((c) => `c.${c}`).join(', '));
  const rows = await perKey(
    db,
    CUSTOMER,
    remoteIds.map((cust) => ({ cust })),
    (ref) =>
      sql<CorrectedRow>`select ${columns},
        ${expiredSumSql(shopId, ref, 'points', now)} as expired_points, ${expiredSumSql(shopId, ref, 'credits', now)} as expired_credits,
        h.next_at, ${nextExpiryAmountSql(shopId, ref, 'points')} as next_points, ${nextExpiryAmountSql(shopId, ref, 'credits')} as next_credits
      from customers c, ${nextExpirySql(shopId, ref, now)} h
      where c.shop_id = ${shopId} and c.remote_id = ${ref('cust')}`,
  );
  const out = new Map<number, Balances>();
  for (const row of rows) {
    const stored = fromStored(row);
    out.set(Number(row.cust), {
      ...stored,
      points: stored.points - Number(row.expired_points),
      credits: stored.credits - Number(row.expired_credits),
      nextExpiry: toNextExpiry(row.next_at, row.next_points, row.next_credits),
    });
  }
  return out;
}

/**
 * Balances at `now` of customers whose rows were just read: exact at every instant, whatever
 * the sweep has or has not done yet. Costs nothing beyond the rows unless something expired
 * since they were written.
 */
export async function balancesAt(db: DB, shopId: number, rows: readonly (StoredColumns & { remote_id: number })[], now: number): Promise<Balances[]> {
  const stale = rows.filter((row) => isStale(row, now)).map((row) => Number(row.remote_id));
  const fixed = stale.length === 0 ? null : await corrected(db, shopId, stale, now);
  const out = rows.map((row) => fixed?.get(Number(row.remote_id)) ?? fromStored(row));
  return out.some((b) => mayBeDue(b.activeAt, now)) ? withoutInactive(db, shopId, out, now) : out;
}

/**
 * In inactivity mode, a balance that fell due is nothing from that instant on, whether or not
 * the sweep has written it off yet (expiry.ts). Read only when a customer was idle for a day.
 */
async function withoutInactive(db: DB, shopId: number, balances: Balances[], now: number): Promise<Balances[]> {
  const shop = await getShop(db, shopId);
  if (shop === undefined) return balances;
  return balances.map((b) => ((inactivityDue(shop, b.activeAt) ?? Infinity) <= now ? { ...b, points: 0, credits: 0, nextExpiry: null } : b));
}

/**
 * Locks these customers until the transaction ends (in ascending remote_id, so two writers
 * never deadlock) and reads their balances at `now`: what a ledger write starts from.
 */
export async function lockBalances(
  trx: DB,
  shopId: number,
  remoteIds: readonly number[],
  now: number,
  /** Other columns of the customers to read with the same statement, handed to `each`. */
  also?: { columns: readonly (keyof CustomersTable)[]; each(row: Record<string, unknown>): void },
): Promise<Map<number, Balances>> {
  const sorted = [...new Set(remoteIds)].sort((a, b) => a - b);
  const rows: (StoredColumns & { remote_id: number })[] = [];
  for (let i = 0; i < sorted.length; i += 1000) {
    const query = trx
      .selectFrom('customers')
      .select(['remote_id', ...BALANCE_COLUMNS, ...(also?.columns ?? [])])
      .where('shop_id', '=', shopId)
      .where('remote_id', 'in', sorted.slice(i, i + 1000))
      .orderBy('remote_id');
    rows.push(...((await lockedRows(trx, query).execute()) as (StoredColumns & { remote_id: number })[]));
  }
  if (also !== undefined) for (const row of rows) also.each(row as unknown as Record<string, unknown>);
  const balances = await balancesAt(trx, shopId, rows, now);
  return new Map(rows.map((row, i) => [Number(row.remote_id), balances[i]!]));
}

/** Hundredths to the API's decimal number: 1234 → 12.34. */
export function creditsToNumber(hundredths: number): number {
  return Math.round(Number(hundredths)) / 100;
}
