// The order in which a deduction consumes lots: first-expiring first, never-expiring last,
// and among equal expiries the oldest first. Stored lots are those the posting read
// (read.ts: only as far as its deductions can reach); lots granted by the batch being planned
// are merged in. Pure: plan.ts drives it, and nothing here touches a database.

/** The FIFO order's expiry key of a lot that never expires: after every real expiry. */
export const NEVER = Number.MAX_SAFE_INTEGER;

export interface Lot {
  /** 0 for a lot created by the batch (the writer gives it its id). */
  id: number;
  /** Created by the batch being planned (younger than every stored lot). */
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

export function before(a: Lot, b: Lot): boolean {
  if (a.key !== b.key) return a.key < b.key;
  if (a.fresh !== b.fresh) return !a.fresh;
  return a.seq < b.seq;
}

/** One customer's lots of one kind, in consumption order. */
export class LotQueue {
  #next = 0;
  readonly #fresh: Lot[] = [];

  /**
   * `stored`: the customer's unexpired stored lots in FIFO order, as far as they were read;
   * `complete` says they are all of them.
   */
  constructor(
    private readonly stored: readonly Lot[],
    private readonly complete: boolean,
  ) {}

  /** A lot granted by the batch. */
  add(lot: Lot): void {
    let i = this.#fresh.length;
    while (i > 0 && before(lot, this.#fresh[i - 1]!)) i--;
    this.#fresh.splice(i, 0, lot);
  }

  /** Takes `amount` from lots live at `now`, in order; the caller has checked the balance covers it. */
  consume(amount: number, now: number): Consumption[] {
    const out: Consumption[] = [];
    let left = amount;
    while (left > 0) {
      while (this.#next < this.stored.length && this.stored[this.#next]!.remaining === 0) this.#next++;
      const stored = this.stored[this.#next];
      if (stored === undefined && !this.complete) throw new Error('the lots read do not reach the deduction');
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
}
