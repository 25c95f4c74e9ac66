import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { DatabaseBusyError } from '../../src/db/connection-queue.js';
import { transaction } from '../../src/db/dialect.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';

// On PostgreSQL, write transactions have connections of their own, at most four of the pool's
// and never the last two: a flood of long writes leaves connections to quick reads, and a write
// never waits behind reads. (SQLite has one connection, shared in turn.)

describe.runIf(TEST_DIALECT === 'postgres')('write connections (postgres)', () => {
  let testDb: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    database = connect(testDb.url, { poolSize: 4, maxQueueWaitMs: 300 });
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  it('keeps connections for reads while writes wait for a slot, and bounds the wait', async () => {
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    // Two writes hold the two write connections until released.
    const writes = [1, 2].map(() => transaction(database.db, () => held));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A third write waits for one, though two connections are free for reads, and gives up after maxQueueWaitMs.
    const third = transaction(database.db, async () => 'written');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(database.lines.writes.oldestWaitMs()).toBeGreaterThan(0);
    // A read goes straight to a connection.
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    expect(rows).toEqual([{ one: 1 }]);
    expect(database.lines.reads.oldestWaitMs()).toBe(0);
    await expect(third).rejects.toBeInstanceOf(DatabaseBusyError);
    open();
    await Promise.all(writes);
    expect(await transaction(database.db, async () => 'written')).toBe('written');
  });

  it('lets a write start while reads hold every read connection', async () => {
    const finished: string[] = [];
    // poolSize 4: two connections for reads; four reads keep them busy and wait for them in turn.
    const reads = [1, 2, 3, 4].map(() => sql`select pg_sleep(0.2)`.execute(database.db).then(() => finished.push('read')));
    await new Promise((resolve) => setTimeout(resolve, 50));
    await transaction(database.db, async (trx) => sql`select 1`.execute(trx)).then(() => finished.push('write'));
    await Promise.all(reads);
    expect(finished).toEqual(['write', 'read', 'read', 'read', 'read']);
  });

  it('lets at most four writes hold connections of a larger pool', async () => {
    const large = connect(testDb.url, { poolSize: 10, maxQueueWaitMs: 5000 });
    let open!: () => void;
    const held = new Promise<void>((resolve) => (open = resolve));
    try {
      const started: number[] = [];
      const writes = [1, 2, 3, 4, 5].map((n) => transaction(large.db, async () => (started.push(n), held)));
      for (let waited = 0; started.length < 4 && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      await new Promise((resolve) => setTimeout(resolve, 200));
      // The line is first come, first served; the pool connects them in any order.
      expect([...started].sort()).toEqual([1, 2, 3, 4]);
      expect(large.lines.writes.oldestWaitMs()).toBeGreaterThan(0);
      open();
      await Promise.all(writes);
      expect(started.at(-1)).toBe(5);
    } finally {
      open();
      await large.close();
    }
  });
});
