import { describe, expect, it } from 'vitest';
import { ConnectionQueue, DatabaseBusyError } from '../../src/db/connection-queue.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the line for database connections', () => {
  it('hands permits out first come, first served', async () => {
    const queue = new ConnectionQueue(1);
    const order: number[] = [];
    const first = await queue.acquire();
    const waiting = [1, 2, 3].map((n) => queue.acquire().then((release) => (order.push(n), release)));
    await tick();
    expect(queue.oldestWaitMs()).toBeGreaterThanOrEqual(0);
    first();
    for (const next of waiting) (await next)();
    expect(order).toEqual([1, 2, 3]);
    expect(queue.oldestWaitMs()).toBe(0);
  });

  it('hands a released permit over on the next turn of the event loop when asked (SQLite), so that I/O is served between holders', async () => {
    const queue = new ConnectionQueue(1, Infinity, true);
    const order: string[] = [];
    const first = await queue.acquire();
    const waiting = [1, 2].map((n) =>
      queue.acquire().then((release) => {
        order.push(`holder ${n}`);
        // What reaches the loop while a holder works (a request to answer, or to shed) is
        // served before the next holder starts.
        setImmediate(() => order.push(`loop after ${n}`));
        release();
      }),
    );
    first();
    await Promise.all(waiting);
    await tick();
    expect(order).toEqual(['holder 1', 'loop after 1', 'holder 2', 'loop after 2']);
  });

  it('lets a waiter give up after maxWaitMs with DatabaseBusyError, and keeps the line going', async () => {
    const queue = new ConnectionQueue(1, 20);
    const held = await queue.acquire();
    await expect(queue.acquire()).rejects.toBeInstanceOf(DatabaseBusyError);
    expect(queue.oldestWaitMs()).toBe(0);
    const next = queue.acquire();
    held();
    (await next)();
    // Releasing twice gives back one permit only.
    held();
    const a = await queue.acquire();
    await expect(queue.acquire()).rejects.toBeInstanceOf(DatabaseBusyError);
    a();
  });

  it('does not start a waiter whose wait ran out while the event loop was busy: it gives up, and the permit goes on', async () => {
    const queue = new ConnectionQueue(1, 20);
    const held = await queue.acquire();
    const late = queue.acquire();
    // The loop is held past the waiter's time, so its timer cannot fire before the release.
    const until = performance.now() + 30;
    while (performance.now() < until);
    held();
    await expect(late).rejects.toBeInstanceOf(DatabaseBusyError);
    // The permit was not lost: the next caller gets it at once.
    (await queue.acquire())();
    expect(queue.oldestWaitMs()).toBe(0);
  });

  it('tells how long a newcomer would wait at the pace of its recent holds: 0 while a permit is free, more for each caller ahead', async () => {
    const queue = new ConnectionQueue(2);
    expect(queue.expectedWaitMs()).toBe(0);
    // One hold of at least 20 ms sets the pace.
    const first = await queue.acquire();
    const until = performance.now() + 20;
    while (performance.now() < until);
    first();
    const a = await queue.acquire();
    expect(queue.expectedWaitMs()).toBe(0);
    const b = await queue.acquire();
    // Both permits held: a newcomer waits for one of them.
    const one = queue.expectedWaitMs();
    expect(one).toBeGreaterThan(0);
    const c = queue.acquire();
    // With one caller ahead of it, twice as long: the caller ahead takes the first permit that frees.
    expect(queue.expectedWaitMs()).toBeCloseTo(one * 2, 6);
    a();
    (await c)();
    b();
    expect(queue.expectedWaitMs()).toBe(0);
  });

  it('reports how long the oldest waiter has waited', async () => {
    const queue = new ConnectionQueue(2);
    const a = await queue.acquire();
    const b = await queue.acquire();
    expect(queue.oldestWaitMs()).toBe(0);
    const c = queue.acquire();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(queue.oldestWaitMs()).toBeGreaterThanOrEqual(25);
    a();
    (await c)();
    b();
    expect(queue.oldestWaitMs()).toBe(0);
  });
});
