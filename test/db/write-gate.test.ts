import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { DatabaseBusyError } from '../../src/db/connection-queue.js';
import { transaction } from '../../src/db/dialect.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';

// On PostgreSQL, write transactions may hold all but two of the pool's connections: a flood of
// long writes leaves connections to quick reads. (SQLite has one connection, shared in turn.)

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
});
