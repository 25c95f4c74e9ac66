// The order in which a deduction consumes lots: first-expiring first, never-expiring last,
// and among equal expiries the oldest first. Stored lots are read from the database a chunk at
// a time, only as far as deductions reach; lots granted by the batch being applied are merged
// in. Pure but for the loader it is given: post.ts reads the lots and writes the results.

export interface Lot {
  /** 0 until a lot created in this batch is given its id. */
  id: number;
  /** Created by the batch being applied (younger than every stored lot). */
  fresh: boolean;
  /** Creation order: the id for stored lots, a counter for fresh ones. */
  seq: number;
  amount: number;
  remaining: number;
  /** The expiry, or NEVER (lots-repository.ts) for a lot that never expires. */
  key: number;
  /** Index of the granting event within the batch, for fresh lots. */
  eventIndex: number;
}

export interface Consumption {
  lot: Lot;
  amount: number;
}

/** The next stored lots after (key, id), in consumption order; fewer than `limit` means there are no more. */
export type LoadLots = (afterKey: number, afterId: number, limit: number) => Promise<Lot[]>;

export function before(a: Lot, b: Lot): boolean {
  if (a.key !== b.key) return a.key < b.key;
  if (a.fresh !== b.fresh) return !a.fresh;
  return a.seq < b.seq;
}

/** One customer's lots of one kind, in consumption order. */
export class LotQueue {
  readonly #stored: Lot[] = [];
  #next = 0;
  #complete: boolean;
  #afterKey: number;
  #afterId: number;
  readonly #fresh: Lot[] = [];

  /**
   * `now` and `after` start the stored lots' cursor: lots that expired by now are never read.
   * `load` is null when the customer has no stored lots of this kind worth reading.
   */
  constructor(
    now: number,
    never: number,
    private readonly load: LoadLots | null,
    private readonly chunk = 64,
  ) {
    this.#complete = load === null;
    this.#afterKey = now;
    this.#afterId = never;
  }

  /** Stored lots read ahead of time (the first of many customers in one query), at most `limit`. */
  preload(lots: readonly Lot[], limit: number): void {
    this.#take(lots, limit);
  }

  /** A lot granted by the batch. */
  add(lot: Lot): void {
    let i = this.#fresh.length;
    while (i > 0 && before(lot, this.#fresh[i - 1]!)) i--;
    this.#fresh.splice(i, 0, lot);
  }

  /** Takes `amount` from lots live at `now`, in order; the caller has checked the balance covers it. */
  async consume(amount: number, now: number): Promise<Consumption[]> {
    const out: Consumption[] = [];
    let left = amount;
    while (left > 0) {
      while (this.#next < this.#stored.length && this.#stored[this.#next]!.remaining === 0) this.#next++;
      if (this.#next === this.#stored.length && !this.#complete) {
        this.#take(await this.load!(this.#afterKey, this.#afterId, this.chunk), this.chunk);
        continue;
      }
      const stored = this.#stored[this.#next];
      const fresh = this.#fresh.find((lot) => lot.remaining > 0 && lot.key > now);
      const lot = stored === undefined ? fresh : fresh === undefined || before(stored, fresh) ? stored : fresh;
      if (lot === undefined) throw new Error('lots do not cover the deduction');
      const take = Math.min(lot.remaining, left);
      lot.remaining -= take;
      left -= take;
      out.push({ lot, amount: take });
    }
    return out;
  }

  #take(lots: readonly Lot[], limit: number): void {
    if (lots.length < limit) this.#complete = true;
    const last = lots[lots.length - 1];
    if (last !== undefined) {
      this.#afterKey = last.key;
      this.#afterId = last.id;
    }
    this.#stored.push(...lots);
  }
}
