import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { allocateIds, allocateIdsOf, transaction } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';

// A since_id cursor is exact only if, within a shop, ids become visible in the order they were
// handed out: on PostgreSQL the statement that hands a table's ids out first takes the shop's
// lock on them, held to commit.

describe.runIf(TEST_DIALECT === 'postgres')('ids handed out (postgres)', () => {
  let testDb: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    database = connect(testDb.url);
    await migrateToLatest(database.db);
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.drop();
  });

  const settled = (promise: Promise<unknown>) => Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 300))]);

  it("makes the shop's next writer of a table wait for the commit of the ids before it", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let handedOut!: (ids: number[][]) => void;
    const first = new Promise<number[][]>((resolve) => (handedOut = resolve));
    const writer = transaction(database.db, async (trx) => {
      handedOut(
        await allocateIdsOf(trx, 1, [
          ['points_events', 3],
          ['points_lots', 2],
          ['webhook_deliveries', 0],
        ]),
      );
      await held;
    });
    const [events, lots, deliveries] = await first;
    expect(events).toHaveLength(3);
    expect(events).toEqual([...events!].sort((a, b) => a - b));
    expect([lots!.length, deliveries]).toEqual([2, []]);

    const sameTable = transaction(database.db, (trx) => allocateIds(trx, 1, 'points_lots', 1));
    // Another table of the shop, and the same table of another shop, go on.
    expect(await settled(transaction(database.db, (trx) => allocateIds(trx, 1, 'redemptions', 1)))).toBe(true);
    expect(await settled(transaction(database.db, (trx) => allocateIds(trx, 2, 'points_lots', 1)))).toBe(true);
    expect(await settled(sameTable)).toBe(false);
    release();
    await writer;
    const [next] = await sameTable;
    expect(next).toBeGreaterThan(Math.max(...lots!));
  });
});
