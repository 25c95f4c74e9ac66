// The order in which a deduction consumes lots: first-expiring first, never-expiring last,
// and among equal expiries the oldest first. Pure: apply.ts loads the lots and writes results.

export interface Lot {
  /** 0 until a lot created in this batch is given its id. */
  id: number;
  /** Created by the batch being applied (younger than every stored lot). */
  fresh: boolean;
  /** Creation order: the id for stored lots, a counter for fresh ones. */
  seq: number;
  amount: number;
  remaining: number;
  expiresAt: number | null;
  /** Index of the granting event within the batch, for fresh lots. */
  eventIndex: number;
}

export interface Consumption {
  lot: Lot;
  amount: number;
}

function before(a: Lot, b: Lot): boolean {
  if (a.expiresAt !== b.expiresAt) {
    if (a.expiresAt === null) return false;
    if (b.expiresAt === null) return true;
    return a.expiresAt < b.expiresAt;
  }
  if (a.fresh !== b.fresh) return !a.fresh;
  return a.seq < b.seq;
}

/** One customer's lots of one kind, kept in consumption order. */
export class LotQueue {
  readonly #lots: Lot[] = [];

  add(lot: Lot): void {
    let i = this.#lots.length;
    while (i > 0 && before(lot, this.#lots[i - 1]!)) i--;
    this.#lots.splice(i, 0, lot);
  }

  /** Takes `amount` from lots live at `now`, in order; the caller has checked the balance covers it. */
  consume(amount: number, now: number): Consumption[] {
    const out: Consumption[] = [];
    let left = amount;
    for (const lot of this.#lots) {
      if (left === 0) break;
      if (lot.remaining === 0 || (lot.expiresAt !== null && lot.expiresAt <= now)) continue;
      const take = Math.min(lot.remaining, left);
      lot.remaining -= take;
      left -= take;
      out.push({ lot, amount: take });
    }
    if (left !== 0) throw new Error('lots do not cover the deduction');
    return out;
  }
}
