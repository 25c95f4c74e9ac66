import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenUsage, USAGE_FLUSH_MS } from '../../src/http/token-usage.js';

// A request notes its token's use in memory; the uses are written together, at most once a
// minute or when asked (http/token-usage.ts), and a failed write loses none of them.
describe('token usage', () => {
  afterEach(() => vi.useRealTimers());
  const log = pino({ level: 'silent' });

  it('writes the latest use of each token once per interval, not once per request', async () => {
    vi.useFakeTimers();
    const writes: [number, number][][] = [];
    const usage = new TokenUsage(async (uses) => void writes.push([...uses]), log);
    usage.note(1, 1000);
    usage.note(2, 1500);
    usage.note(1, 3000);
    usage.note(1, 2000);
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(USAGE_FLUSH_MS - 1);
    expect(writes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(writes).toEqual([
      [
        [1, 3000],
        [2, 1500],
      ],
    ]);
    // Nothing noted since: no write, however long it waits.
    await vi.advanceTimersByTimeAsync(USAGE_FLUSH_MS * 3);
    expect(writes).toHaveLength(1);
  });

  it('keeps the uses of a failed write for the next one, and a flush waits for the write', async () => {
    let fail = true;
    const writes: [number, number][][] = [];
    const usage = new TokenUsage(async (uses) => {
      if (fail) throw new Error('database unavailable');
      writes.push([...uses]);
    }, log);
    usage.note(7, 100);
    await expect(usage.flush()).rejects.toThrow('database unavailable');
    usage.note(8, 200);
    fail = false;
    await usage.flush();
    expect(writes).toEqual([
      [
        [7, 100],
        [8, 200],
      ],
    ]);
    await usage.close();
    expect(writes).toHaveLength(1);
  });

  it('lets a closing server wait at most a second for a write that hangs', async () => {
    vi.useFakeTimers();
    const usage = new TokenUsage(() => new Promise(() => {}), log);
    usage.note(1, 1);
    let closed = false;
    void usage.close().then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(closed).toBe(true);
  });
});
