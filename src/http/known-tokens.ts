// The hashes of every live API token, held in memory so that the per-address limit on unknown
// tokens (auth-failures.ts) can tell a valid token from a guess without a database read of its
// own: many shops' clients share one address behind a NAT or a proxy, and a neighbour's failures
// must never lock them out (docs/faults.md). Tokens are few (a handful per shop) and their
// hashes small.
//
// A limited address's token that the set does not hold waits for the next load of the set, one
// that begins after it arrived, so a token created a moment ago is found too. Loads begin at
// most once per LOAD_INTERVAL_MS, shared by every request waiting: a flood of guesses costs one
// read of the tokens that often, and each guess an answer within that time.

/** The least time between two loads of the set. */
export const LOAD_INTERVAL_MS = 1000;

export class KnownTokens {
  #hashes = new Set<string>();
  #lastLoadAt = -Infinity;
  /** The load that begins next, shared by those who wait for it; null when none is due. */
  #next: Promise<void> | null = null;

  constructor(readonly load: () => Promise<string[]>) {}

  /** Whether a token with this hash is live, as of a load that began after this call. */
  async has(hash: string): Promise<boolean> {
    if (this.#hashes.has(hash)) return true;
    await this.#nextLoad();
    return this.#hashes.has(hash);
  }

  #nextLoad(): Promise<void> {
    if (this.#next !== null) return this.#next;
    const wait = Math.max(0, this.#lastLoadAt + LOAD_INTERVAL_MS - performance.now());
    const next = new Promise((resolve) => setTimeout(resolve, wait)).then(async () => {
      // From here on a new arrival needs a load of its own: this one may read before its token.
      this.#next = null;
      this.#lastLoadAt = performance.now();
      this.#hashes = new Set(await this.load());
    });
    this.#next = next;
    return next;
  }
}
