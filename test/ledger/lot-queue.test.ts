import { describe, expect, it } from 'vitest';
import { LotQueue, type Lot } from '../../src/ledger/lot-queue.js';

// The consumption order alone, without a database: stored lots come from a loader that pages
// through a sorted list, as the FIFO index does.

const NEVER = Number.MAX_SAFE_INTEGER;
const NOW = 1000;

const stored = (id: number, remaining: number, key: number): Lot => ({ id, fresh: false, seq: id, amount: remaining, remaining, key, eventIndex: -1 });
const fresh = (seq: number, remaining: number, key: number): Lot => ({ id: 0, fresh: true, seq, amount: remaining, remaining, key, eventIndex: seq });

/** A loader over lots sorted by (key, id), recording each read. */
function loader(lots: Lot[]) {
  const reads: { afterKey: number; afterId: number; limit: number }[] = [];
  const load = async (afterKey: number, afterId: number, limit: number) => {
    reads.push({ afterKey, afterId, limit });
    return lots.filter((l) => l.key > afterKey || (l.key === afterKey && l.id > afterId)).slice(0, limit);
  };
  return { load, reads };
}

const taken = (consumptions: { lot: Lot; amount: number }[]) => consumptions.map((c) => [c.lot.fresh ? `f${c.lot.seq}` : `s${c.lot.id}`, c.amount]);

describe('LotQueue', () => {
  it('takes stored lots in order, reading further chunks only as far as the deduction reaches', async () => {
    const lots = [stored(3, 5, 2000), stored(1, 5, 3000), stored(2, 5, 3000), stored(4, 5, NEVER), stored(5, 5, NEVER)];
    const { load, reads } = loader(lots);
    const queue = new LotQueue(NOW, NEVER, load, 2);
    expect(taken(await queue.consume(7, NOW))).toEqual([['s3', 5], ['s1', 2]]);
    expect(reads).toEqual([{ afterKey: NOW, afterId: NEVER, limit: 2 }]);
    expect(taken(await queue.consume(10, NOW))).toEqual([['s1', 3], ['s2', 5], ['s4', 2]]);
    expect(reads.slice(1)).toEqual([{ afterKey: 3000, afterId: 1, limit: 2 }]);
  });

  it('merges fresh lots: earlier expiry first, stored before fresh on equal expiry, skips expired fresh lots', async () => {
    const { load } = loader([stored(1, 5, 3000), stored(2, 5, NEVER)]);
    const queue = new LotQueue(NOW, NEVER, load, 8);
    queue.add(fresh(0, 5, NEVER));
    queue.add(fresh(1, 5, 3000));
    queue.add(fresh(2, 5, 500));
    queue.add(fresh(3, 5, 2000));
    expect(taken(await queue.consume(22, NOW))).toEqual([['f3', 5], ['s1', 5], ['f1', 5], ['s2', 5], ['f0', 2]]);
  });

  it('starts from what was preloaded, and knows a short preload is the end', async () => {
    const { load, reads } = loader([]);
    const queue = new LotQueue(NOW, NEVER, load, 8);
    queue.preload([stored(7, 4, 2000)], 2);
    expect(taken(await queue.consume(4, NOW))).toEqual([['s7', 4]]);
    await expect(queue.consume(1, NOW)).rejects.toThrow('lots do not cover');
    expect(reads).toEqual([]);
  });

  it('reads nothing for a customer known to hold no stored lots', async () => {
    const queue = new LotQueue(NOW, NEVER, null);
    queue.add(fresh(0, 3, NEVER));
    expect(taken(await queue.consume(3, NOW))).toEqual([['f0', 3]]);
  });
});
