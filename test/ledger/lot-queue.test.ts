import { describe, expect, it } from 'vitest';
import { LotQueue, type Lot } from '../../src/ledger/lot-queue.js';

// The consumption order alone, without a database: stored lots are those read, in the order
// of the FIFO index (how far they are read is read.ts's: test/ledger/plan.test.ts).

const NEVER = Number.MAX_SAFE_INTEGER;
const NOW = 1000;

const stored = (id: number, remaining: number, key: number): Lot => ({ id, fresh: false, seq: id, amount: remaining, remaining, key, eventIndex: -1 });
const fresh = (seq: number, remaining: number, key: number): Lot => ({ id: 0, fresh: true, seq, amount: remaining, remaining, key, eventIndex: seq });

const taken = (consumptions: { lot: Lot; amount: number }[]) => consumptions.map((c) => [c.lot.fresh ? `f${c.lot.seq}` : `s${c.lot.id}`, c.amount]);

describe('LotQueue', () => {
  it('takes stored lots in order, going on where the last deduction stopped', () => {
    const queue = new LotQueue([stored(3, 5, 2000), stored(1, 5, 3000), stored(2, 5, 3000), stored(4, 5, NEVER), stored(5, 5, NEVER)], true);
    expect(taken(queue.consume(7, NOW))).toEqual([
      ['s3', 5],
      ['s1', 2],
    ]);
    expect(taken(queue.consume(10, NOW))).toEqual([
      ['s1', 3],
      ['s2', 5],
      ['s4', 2],
    ]);
  });

  it('merges fresh lots: earlier expiry first, stored before fresh on equal expiry, skips expired fresh lots', () => {
    const queue = new LotQueue([stored(1, 5, 3000), stored(2, 5, NEVER)], true);
    queue.add(fresh(0, 5, NEVER));
    queue.add(fresh(1, 5, 3000));
    queue.add(fresh(2, 5, 500));
    queue.add(fresh(3, 5, 2000));
    expect(taken(queue.consume(22, NOW))).toEqual([
      ['f3', 5],
      ['s1', 5],
      ['f1', 5],
      ['s2', 5],
      ['f0', 2],
    ]);
  });

  it('knows the lots read are all there are, or that they were not read far enough', () => {
    const all = new LotQueue([stored(7, 4, 2000)], true);
    expect(taken(all.consume(4, NOW))).toEqual([['s7', 4]]);
    expect(() => all.consume(1, NOW)).toThrow('lots do not cover');
    const some = new LotQueue([stored(7, 4, 2000)], false);
    expect(() => some.consume(5, NOW)).toThrow('the lots read do not reach the deduction');
  });

  it('needs no stored lots for a customer known to hold none', () => {
    const queue = new LotQueue([], true);
    queue.add(fresh(0, 3, NEVER));
    expect(taken(queue.consume(3, NOW))).toEqual([['f0', 3]]);
  });
});
