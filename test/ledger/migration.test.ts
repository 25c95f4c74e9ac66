import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestDatabase, migrateBefore, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';

// A database whose ledger was written before balances were stored (migration 005): the
// migration computes every stored balance once, and the result passes `loyalty verify`.

const T0 = Date.UTC(2026, 0, 1);

describe(`migration 005: stored balances of an existing ledger (${TEST_DIALECT})`, () => {
  let testDb: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    database = connect(testDb.url);
  });
  afterAll(async () => {
    await database.close();
    await testDb.drop();
  });

  it('computes balances, lifetime totals and the next expiry from the lots and events', async () => {
    const db = database.db;
    await migrateBefore(db, '005_stored_balances');

    await sql`insert into shops (id, name, per_event_expiry, points_expiry_days, created_at, updated_at) values (1, 'Old', 1, null, ${T0}, ${T0})`.execute(db);
    for (const id of [1, 2, 3]) {
      await sql`insert into customers (shop_id, remote_id, email, created_at, updated_at) values (1, ${id}, ${`c${id}@example.com`}, ${T0}, ${T0})`.execute(db);
    }
    // Customer 1: 100 points expiring at T0+10, 50 never, 20 credits (hundredths 2000); then spent 120 points
    // (100 from the first lot, 20 from the second) and 5.00 credits; then 10 points at T0+10 that expired unswept.
    const event = (id: number, customer: number, points: number, credits: number, source: string, expires: number | null, pb: number, cb: number) =>
      sql`insert into points_events (shop_id, id, customer_remote_id, source, points_amount, credits_amount, applied_at, expires_at, created_at, points_balance, credits_balance)
        values (1, ${id}, ${customer}, ${source}, ${points}, ${credits}, ${T0}, ${expires}, ${T0}, ${pb}, ${cb})`.execute(db);
    const lot = (id: number, customer: number, kind: string, eventId: number, amount: number, remaining: number, expires: number | null) =>
      sql`insert into points_lots (shop_id, id, customer_remote_id, kind, event_id, amount, remaining, expires_at, created_at)
        values (1, ${id}, ${customer}, ${kind}, ${eventId}, ${amount}, ${remaining}, ${expires}, ${T0})`.execute(db);
    const consumption = (eventId: number, lotId: number, amount: number) =>
      sql`insert into lot_consumptions (shop_id, event_id, lot_id, amount) values (1, ${eventId}, ${lotId}, ${amount})`.execute(db);
    await event(1, 1, 100, 0, 'order', T0 + 10, 100, 0);
    await lot(1, 1, 'points', 1, 100, 0, T0 + 10);
    await event(2, 1, 50, 2000, 'manual', null, 150, 2000);
    await lot(2, 1, 'points', 2, 50, 30, null);
    await lot(3, 1, 'credits', 2, 2000, 1500, null);
    await event(3, 1, -120, -500, 'manual', null, 30, 1500);
    await consumption(3, 1, 100);
    await consumption(3, 2, 20);
    await consumption(3, 3, 500);
    await event(4, 1, 10, 0, 'review', T0 + 10, 40, 1500);
    await lot(4, 1, 'points', 4, 10, 10, T0 + 10);
    // Customer 2: one grant, swept: an expiration event took it all.
    await event(5, 2, 7, 0, 'signup', T0 + 5, 7, 0);
    await lot(5, 2, 'points', 5, 7, 0, T0 + 5);
    await event(6, 2, -7, 0, 'expiration', null, 0, 0);
    await consumption(6, 5, 7);

    await migrateToLatest(db);
    const rows = await db
      .selectFrom('customers')
      .select([
        'remote_id',
        'points_balance',
        'credits_balance',
        'points_earned_lifetime',
        'points_spent_lifetime',
        'next_expiry_at',
        'next_expiry_points',
        'next_expiry_credits',
      ])
      .orderBy('remote_id')
      .execute();
    expect(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null ? null : Number(v)])))).toEqual([
      {
        remote_id: 1,
        points_balance: 40,
        credits_balance: 1500,
        points_earned_lifetime: 160,
        points_spent_lifetime: 120,
        next_expiry_at: T0 + 10,
        next_expiry_points: 10,
        next_expiry_credits: 0,
      },
      {
        remote_id: 2,
        points_balance: 0,
        credits_balance: 0,
        points_earned_lifetime: 7,
        points_spent_lifetime: 0,
        next_expiry_at: null,
        next_expiry_points: 0,
        next_expiry_credits: 0,
      },
      {
        remote_id: 3,
        points_balance: 0,
        credits_balance: 0,
        points_earned_lifetime: 0,
        points_spent_lifetime: 0,
        next_expiry_at: null,
        next_expiry_points: 0,
        next_expiry_credits: 0,
      },
    ]);
    expect(await verifyLedger(db, null)).toEqual([]);
  });
});
