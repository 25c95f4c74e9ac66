import type { DB } from '../db/tables.js';

// What a resource's writes do beyond its own table (an order earns, a new customer gets a
// referral code, a tier change re-tiers the shop): each resource names its effects in its
// description (resources/), and write.ts calls them in the writer's transaction, before the
// records are shown, so that a PUT's answer already holds what its write earned. The records
// engine knows no programme; the descriptions do.

/** Who writes, for the effects: the shop, the clock, and whether records earn. */
export interface EffectWriter {
  shopId: number;
  now: number;
  /** False for `loyalty import --no-earn`: records are stored, and earn nothing. */
  earn?: boolean;
}

export interface WrittenRecord {
  id: number;
  created: boolean;
  /** The record's column values as written. */
  values: Record<string, unknown>;
}

/** What the effects read of the records before they are written, by id. */
export type Prior = Map<number, Record<string, unknown>>;

export interface RecordEffects {
  /** Reads what `written` needs of the records as they were (customers: their birthdays). */
  prior?(trx: DB, shopId: number, ids: readonly number[]): Promise<Prior>;
  /**
   * Column values the programme gives the records a bulk upsert (import, demo) creates, by
   * column, one for each of `fresh` (their values as the write gives them): written in the
   * insert itself, never over a stored record's (customers: referral codes, which the shop's
   * unique index guards, so a clash fails the write and the importer writes again; the next
   * birthday grant). Needs `prior`, which tells the records that exist.
   */
  created?(trx: DB, w: EffectWriter, fresh: readonly Record<string, unknown>[]): Promise<Record<string, readonly unknown[]>>;
  /** After records were written (PUT, POST, PATCH, import, demo). */
  written?(trx: DB, w: EffectWriter, written: readonly WrittenRecord[], prior: Prior): Promise<void>;
  /** After a record was deleted. */
  removed?(trx: DB, shopId: number): Promise<void>;
}
