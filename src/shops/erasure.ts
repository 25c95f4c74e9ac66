import { sql } from 'kysely';
import { transaction } from '../db/dialect.js';
import type { DB, Tables } from '../db/tables.js';
import { TOKEN_CACHE_MS } from '../http/auth.js';
import { revokeShopTokens } from './repository.js';

// Erasing a shop and everything stored for it (Shopify's shop/redact). Rows go in transactions
// of at most `chunkSize` rows, so that a shop with millions of events never holds SQLite's one
// writer or PostgreSQL's locks for long: other shops are served in between. No progress is
// recorded anywhere: a run deletes whatever is left, so re-running after an interruption
// finishes the job. The shop's row goes last, so a half-erased shop can always be found again.

type ShopTable = Exclude<keyof Tables, 'shops' | 'id_sequences'>;

const erased = <T extends ShopTable>(table: T, ...key: (keyof Tables[T] & string)[]) => ({ table, key });

/**
 * Every table that holds a shop's rows, with its key after shop_id, in the order they are
 * erased: children before their parents (a webhook's deliveries and attempts would otherwise go
 * by ON DELETE CASCADE, all in one statement); first what the background jobs start from
 * (webhooks, rules, tiers, orders, lots), so that they find nothing of the shop to act on
 * meanwhile; shop_counts and the other counters last, since deleting from the counted tables updates them by trigger.
 */
const ERASED = [
  erased('idempotency_keys', 'key'),
  // Customer tokens are refused once their key is gone.
  erased('storefront_key_origins', 'key_id', 'origin'),
  erased('storefront_keys', 'id'),
  erased('webhook_attempts', 'delivery_id', 'attempt'),
  erased('webhook_deliveries', 'id'),
  erased('webhooks', 'id'),
  erased('stream_leases', 'shop_id'),
  erased('stream_events', 'id'),
  // Connections first: no delivery is received for the shop meanwhile.
  erased('connection_delivery_bodies', 'delivery_id'),
  erased('connection_deliveries', 'id'),
  erased('connections', 'id'),
  erased('connection_refunds', 'refund_id'),
  erased('connection_sources', 'kind', 'remote_id'),
  erased('earning_action_claims', 'customer_remote_id', 'distinct_id'),
  erased('earning_action_counts', 'customer_remote_id', 'rule_id'),
  erased('earning_rules', 'id'),
  erased('campaigns', 'id'),
  erased('vip_tiers', 'id'),
  erased('orders', 'remote_id'),
  erased('subscription_billing_attempts', 'id'),
  erased('subscription_contracts', 'remote_id'),
  erased('points_lots', 'id'),
  erased('lot_consumptions', 'event_id', 'lot_id'),
  erased('points_events', 'id'),
  erased('customer_earned_days', 'customer_remote_id', 'day'),
  erased('expiry_reminders', 'customer_remote_id', 'expires_at', 'days_before'),
  erased('expiry_reminder_cursors', 'days_before'),
  erased('customer_order_days', 'customer_remote_id', 'day', 'currency'),
  erased('ledger_quarters', 'quarter'),
  erased('ledger_days', 'day'),
  erased('ledger_totals', 'shop_id'),
  erased('reward_codes', 'id'),
  erased('redemptions', 'id'),
  erased('rewards', 'id'),
  erased('referrals', 'id'),
  erased('vip_tier_changes', 'id'),
  erased('customers', 'remote_id'),
  erased('customer_redactions', 'remote_id'),
  erased('api_tokens', 'id'),
  erased('audit_events', 'id'),
  erased('tier_members', 'vip_tier_id'),
  erased('reward_redemption_days', 'reward_id', 'day'),
  erased('shop_counts', 'table_name'),
];

// A table added to Tables and not to ERASED fails to compile here (the tests also look for
// leftovers in every table the database catalogue lists).
type Forgotten = Exclude<ShopTable, (typeof ERASED)[number]['table']>;
const _everyTable: [Forgotten] extends [never] ? true : Forgotten = true;

/** Rows per transaction: on SQLite some tens of milliseconds of work. */
export const ERASURE_CHUNK_ROWS = 5000;

/** Passes over every table before giving up on a shop that something keeps writing to. */
const MAX_PASSES = 10;

export interface ErasureOptions {
  chunkSize?: number;
  now?: number;
  /**
   * How long after its tokens are revoked the shop's data starts to go: a running API process
   * trusts a token it has accepted for this long (TOKEN_CACHE_MS) and could write meanwhile.
   */
  settleMs?: number;
  /** Called after each transaction commits, with the table and the rows it deleted. */
  onChunk?: (table: string, rows: number) => void;
}

export interface Erasure {
  /** Rows deleted per table (the shop's own row under `shops`), every table listed. */
  deleted: Record<string, number>;
  transactions: number;
}

/** What erasing the shop would delete: its rows per table, the shop's own row under `shops`. */
export async function countShopRows(db: DB, shopId: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const { table } of ERASED) {
    const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where shop_id = ${shopId}`.execute(db);
    counts[table] = Number(rows[0]?.n ?? 0);
  }
  const shop = await db.selectFrom('shops').select('id').where('id', '=', shopId).executeTakeFirst();
  counts.shops = shop === undefined ? 0 : 1;
  return counts;
}

/** Deletes up to `limit` of the shop's rows of one table, in key order; returns how many. */
async function deleteChunk(trx: DB, shopId: number, table: string, key: readonly string[], limit: number): Promise<number> {
  const columns = sql.join(key.map((c) => sql.ref(c)));
  const result = await sql`delete from ${sql.table(table)} where shop_id = ${shopId} and (${columns}) in
    (select ${columns} from ${sql.table(table)} where shop_id = ${shopId} order by ${columns} limit ${limit})`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Erases a shop: revokes its tokens and stops its re-tiering in one transaction (the shop is
 * unusable from then on), waits until no API process can still accept those tokens, deletes
 * every row of every table in bounded transactions, pass after pass until a pass finds
 * nothing (a write that raced the revocation is caught), and deletes the shop's own row last.
 * Works as well on a shop that an earlier run left half-erased, or whose row is already gone.
 */
export async function eraseShop(db: DB, shopId: number, options: ErasureOptions = {}): Promise<Erasure> {
  const chunkSize = options.chunkSize ?? ERASURE_CHUNK_ROWS;
  const now = options.now ?? Date.now();
  const deleted: Record<string, number> = Object.fromEntries([...ERASED.map((e) => [e.table, 0]), ['shops', 0]]);
  let transactions = 1;

  const revokedAt = await transaction(db, async (trx) => {
    await trx.updateTable('shops').set({ retier_after: null }).where('id', '=', shopId).execute();
    return revokeShopTokens(trx, shopId, now);
  });
  if (revokedAt !== null) await sleep(revokedAt + (options.settleMs ?? TOKEN_CACHE_MS) - now);

  for (let pass = 1; ; pass++) {
    let found = 0;
    for (const { table, key } of ERASED) {
      for (;;) {
        const started = performance.now();
        const rows = await transaction(db, (trx) => deleteChunk(trx, shopId, table, key, chunkSize));
        transactions++;
        deleted[table]! += rows;
        found += rows;
        options.onChunk?.(table, rows);
        if (rows < chunkSize) break;
        // The CLI is a process of its own: on SQLite, other processes' writers wait for the
        // lock by polling, so it rests as long as it held the lock, or they might never get in.
        await sleep(performance.now() - started);
      }
    }
    if (found === 0) break;
    if (pass === MAX_PASSES)
      throw new Error(`shop ${shopId} still had rows after ${MAX_PASSES} passes: something keeps writing to it; run the erasure again once it stops`);
  }

  deleted.shops = await transaction(db, async (trx) => Number((await trx.deleteFrom('shops').where('id', '=', shopId).executeTakeFirst()).numDeletedRows));
  transactions++;
  options.onChunk?.('shops', deleted.shops);
  return { deleted, transactions };
}
