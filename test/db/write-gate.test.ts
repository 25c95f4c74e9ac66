import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { DatabaseBusyError } from '../../src/db/connection-queue.js';
import { transaction } from '../../src/db/dialect.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';

// On PostgreSQL, write transactions may hold at most four of the pool's connections, and never
// the last two: a flood of long writes leaves connections to quick reads. (SQLite has one
// connection, shared in turn.)

describe.runIf(TEST_DIALECT === 'postgres')('the write gate (postgres)', () => {
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
    // Two writes hold the two write slots until released.
    const writes = [1, 2].map(() => transaction(database.db, () => held));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // A third write waits for a slot, though two connections are free, and gives up after maxQueueWaitMs.
    const third = transaction(database.db, async () => 'written');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(database.writeQueueWaitMs()).toBeGreaterThan(0);
    // A read goes straight to a connection.
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
    expect(rows).toEqual([{ one: 1 }]);
    expect(database.queueWaitMs()).toBe(0);
    await expect(third).rejects.toBeInstanceOf(DatabaseBusyError);
    open();
    await Promise.all(writes);
    expect(await transaction(database.db, async () => 'written')).toBe('written');
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
      // The gate is first come, first served; the pool connects them in any order.
      expect([...started].sort()).toEqual([1, 2, 3, 4]);
      expect(large.writeQueueWaitMs()).toBeGreaterThan(0);
      open();
      await Promise.all(writes);
      expect(started.at(-1)).toBe(5);
    } finally {
      open();
      await large.close();
    }
  });
});
