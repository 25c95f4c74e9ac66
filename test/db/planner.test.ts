import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/jobs.js';
import { eventsQuery } from '../../src/ledger/events-repository.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch } from '../ledger/fixtures.js';

// SQLite plans by the statistics PRAGMA optimize keeps (at open and hourly, the
// optimize-database job): with them, one customer's events are read through
// points_events_customer, not by walking every event of the shop in ID order. PostgreSQL keeps
// its statistics itself (autovacuum).

describe.skipIf(TEST_DIALECT === 'postgres')('query planner statistics (sqlite)', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  const plan = async (compiled: CompiledQuery) => {
    const { rows } = await t.database.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]));
    return rows.map((row) => row.detail).join(' | ');
  };

  it("reads a customer's events through their index once the optimize job has run", async () => {
    await createCustomers(t, 200);
    for (let b = 0; b < 10; b++) {
      const events = Array.from({ length: 1000 }, (_, e) => ({ customer_identifier: String(((b * 1000 + e) % 200) + 1), source: 'manual', points_amount: 1 }));
      expect((await postBatch(t, events)).statusCode).toBe(201);
    }
    const job = jobs.find((j) => j.name === 'optimize-database')!;
    await job.run(t.app);
    const page = eventsQuery(t.database.db, t.shop.id, { customerRemoteId: 7 })
      .where('points_events.id', '>', 0)
      .orderBy('points_events.id')
      .limit(26)
      .compile();
    expect(await plan(page)).toMatch(/SEARCH points_events USING INDEX points_events_customer \(shop_id=\? AND customer_remote_id=\? AND id>\?\)/);
    const res = await t.request('GET', `${API}/customers/7/points_events`, { query: { 'pagination[limit]': '100' } });
    expect(res.json().data).toHaveLength(50);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
