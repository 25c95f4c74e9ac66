import { describe, expect, it } from 'vitest';
import { DatabaseBusyError } from '../../src/db/connection-queue.js';
import { SHOP_WRITERS, ShopWriteLines } from '../../src/http/shop-writes.js';

// One shop's requests hold at most two write transactions at once (http/shop-writes.ts): the
// third waits in the shop's own line, while another shop's writes go on.

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("a shop's line of writes", () => {
  it("runs two of a shop's writes at once, queues the third, and lets another shop's write go on", async () => {
    expect(SHOP_WRITERS).toBe(2);
    const lines = new ShopWriteLines(SHOP_WRITERS);
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const started: string[] = [];
    const write = (shop: number, name: string) => lines.run(shop, async () => (started.push(name), held));
    const first = [write(1, 'a'), write(1, 'b'), write(1, 'c')];
    await tick();
    expect(started).toEqual(['a', 'b']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const oldest = lines.oldestWaitMs();
    expect(oldest).toBeGreaterThan(0);
    // For shedding, the longer of the oldest waiter's wait and a newcomer's at the line's pace.
    expect(lines.waitMs()).toBeGreaterThanOrEqual(oldest);
    const other = lines.run(2, async () => 'shop 2');
    expect(await other).toBe('shop 2');
    expect(started).toEqual(['a', 'b']);
    open();
    await Promise.all(first);
    expect(started).toEqual(['a', 'b', 'c']);
    // Nobody holds or waits: the lines are forgotten.
    expect(lines.shops).toBe(0);
    expect(lines.oldestWaitMs()).toBe(0);
  });

  it('lets a waiter wait as long as it takes (the shedding keeps the line short), and forgets the line once idle', async () => {
    const lines = new ShopWriteLines(SHOP_WRITERS);
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const running = [lines.run(1, () => held), lines.run(1, () => held)];
    const late = lines.run(1, async () => 'late');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(lines.oldestWaitMs()).toBeGreaterThan(1000);
    open();
    await Promise.all(running);
    expect(await late).toBe('late');
    expect(lines.shops).toBe(0);
  });

  it('gives a waiter up after the wait allowed only while the process is loaded', async () => {
    let loaded = false;
    const lines = new ShopWriteLines(SHOP_WRITERS, 30, () => !loaded);
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    const running = [lines.run(1, () => held), lines.run(1, () => held)];
    let outcome = 'waiting';
    const waiter = lines
      .run(1, async () => 'served')
      .then(
        (served) => (outcome = served),
        (error: unknown) => (outcome = error instanceof DatabaseBusyError ? 'gave up' : String(error)),
      );
    // Not loaded: past its 30 ms it waits on.
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(outcome).toBe('waiting');
    // Loaded: it gives up at its next look, with DatabaseBusyError (a 503).
    loaded = true;
    await waiter;
    expect(outcome).toBe('gave up');
    open();
    await Promise.all(running);
    expect(lines.shops).toBe(0);
  });

  it('runs every write at once where a shop needs no line (SQLite)', async () => {
    const lines = new ShopWriteLines(Infinity);
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    let started = 0;
    const writes = [1, 2, 3, 4].map(() => lines.run(1, async () => (started++, held)));
    await tick();
    expect(started).toBe(4);
    expect(lines.shops).toBe(0);
    open();
    await Promise.all(writes);
  });
});
