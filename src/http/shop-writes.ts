import { ConnectionQueue } from '../db/connection-queue.js';

// One shop's write transactions queue for its lock on new ids (db/dialect.ts, allocateIds) from
// their first insert to their commit. On PostgreSQL more than two of them at once only wait
// inside the database, each holding one of the process's write connections: one shop's batches
// then took every connection, and another shop's writes waited behind locks they do not need.
// Measured under 500 clients posting batches of 1000 grants to one shop, with four write
// connections and no line per shop: a batch waited up to 1 s for a connection, then up to
// 0.7 s of its 0.8-1.2 s hold for the other batches' locks, and 4 a run took 2.1-2.3 s.
// So a shop's requests hold at most SHOP_WRITERS write transactions at once in a process: one
// reads and plans while the other holds the lock, and the other two write connections stay for
// other shops. The rest wait in the shop's line. Under load (as many requests in flight as
// shedding counts from) a waiter gives up after MAX_QUEUE_WAIT_MS, and the line's wait turns new
// writes away (http/overload.ts). Below that it waits as long as it takes, as it waited inside
// PostgreSQL before: a client's own eight batches at once are not overload, and must not be
// answered 503 (the ledger benchmark's were, when the line gave up regardless). With it, the
// same overload benchmark answered every request within 2 s in 3 runs of 3 (batch p99
// 1.5-1.9 s), and the ledger benchmark's rate held.

/** Write transactions of one shop's requests at once, on PostgreSQL (SQLite has one writer anyway). */
export const SHOP_WRITERS = 2;

export class ShopWriteLines {
  /** The lines of the shops with a write in flight; a line is forgotten once nobody holds or waits. */
  readonly #lines = new Map<number, ConnectionQueue>();

  constructor(
    /** SHOP_WRITERS, or Infinity where a shop's writes need no line of their own. */
    private readonly permits: number,
    private readonly maxWaitMs = Infinity,
    /** While this says so, a waiter past maxWaitMs waits on: the process is not loaded. */
    private readonly patient: () => boolean = () => false,
  ) {}

  /** Runs `work` once fewer than `permits` of the shop's writes are running. */
  async run<T>(shopId: number, work: () => Promise<T>): Promise<T> {
    if (!Number.isFinite(this.permits)) return work();
    let line = this.#lines.get(shopId);
    if (line === undefined) this.#lines.set(shopId, (line = new ConnectionQueue(this.permits, this.maxWaitMs, false, this.patient)));
    try {
      const release = await line.acquire();
      try {
        return await work();
      } finally {
        release();
      }
    } finally {
      if (line.idle()) this.#lines.delete(shopId);
    }
  }

  /** How long the oldest waiter of any shop's line has waited, in ms; 0 when nobody waits. */
  oldestWaitMs(): number {
    let oldest = 0;
    for (const line of this.#lines.values()) oldest = Math.max(oldest, line.oldestWaitMs());
    return oldest;
  }

  /**
   * The longest wait of any shop's line: its oldest waiter's so far, or what a newcomer would
   * wait at its recent pace (ConnectionQueue.expectedWaitMs), whichever is longer.
   */
  waitMs(): number {
    let longest = 0;
    for (const line of this.#lines.values()) longest = Math.max(longest, line.oldestWaitMs(), line.expectedWaitMs());
    return longest;
  }

  /** The shops with a line now (a write running or waiting). */
  get shops(): number {
    return this.#lines.size;
  }
}
