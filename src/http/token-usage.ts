import type { FastifyBaseLogger } from 'fastify';

// When each API token last authenticated a request (`last_used_at` on /api_tokens), kept
// without a write in any request's path: a request only notes the time in memory, and the
// noted times are written together at most once per USAGE_FLUSH_MS, or at once before this
// process lists the tokens, so that its own list is exact. Another process's uses show within
// that time. A write never moves the time back (several processes note the same token).

/** The longest a use waits in memory before it is written. */
export const USAGE_FLUSH_MS = 60_000;
/** The longest a closing server waits for the last uses to be written. */
const CLOSE_FLUSH_MS = 1000;

export class TokenUsage {
  /** Token id → the latest time it was used, not yet written. */
  #pending = new Map<number, number>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    readonly write: (uses: ReadonlyMap<number, number>) => Promise<void>,
    readonly log: FastifyBaseLogger,
    readonly intervalMs = USAGE_FLUSH_MS,
  ) {}

  /** The token was used at `at` (milliseconds). */
  note(tokenId: number, at: number): void {
    const noted = this.#pending.get(tokenId);
    if (noted === undefined || noted < at) this.#pending.set(tokenId, at);
    if (this.#timer === null) {
      this.#timer = setTimeout(() => void this.flush().catch(() => {}), this.intervalMs);
      this.#timer.unref();
    }
  }

  /**
   * Writes what was noted; resolves when it is written. A failed write keeps the uses for the
   * next flush (unless a later use replaced them) and rejects.
   */
  flush(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    // One write at a time, in order: a later flush never lands before an earlier one.
    const next = this.#flushing.then(async () => {
      if (this.#pending.size === 0) return;
      const uses = this.#pending;
      this.#pending = new Map();
      try {
        await this.write(uses);
      } catch (err) {
        for (const [id, at] of uses) this.note(id, at);
        this.log.warn({ err }, "the API tokens' last use could not be written; trying again later");
        throw err;
      }
    });
    this.#flushing = next.catch(() => {});
    return next;
  }

  /** For a closing server: writes what was noted, waiting at most CLOSE_FLUSH_MS. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_MS)));
    await Promise.race([this.flush().catch(() => {}), limit]);
    clearTimeout(timer);
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
