import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrator.js';
import * as m015 from '../../src/db/migrations/015_reports.js';
import { sweepExpiredLots } from '../../src/ledger/expiry.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { migrateBefore, TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch } from '../ledger/fixtures.js';
import { pointsReport } from './fixtures.js';
import { writerOf } from '../../src/db/dialect.js';

// Migration 015 fills the report's aggregates from the history already written: an upgraded
// shop's report is the one it would have had, from the first request.

const NOW = Date.UTC(2026, 4, 1, 12);

const migrateBefore015 = (t: TestContext) => migrateBefore(t.database.db, '015_reports');

/** Fails the fill's second insert into ledger_quarters, as a crash in the middle of it would stop it. */
function failingSecondQuartersInsert(): KyselyPlugin {
  let seen = 0;
  return {
    transformQuery({ node }): RootOperationNode {
      const text = node.kind === 'RawNode' ? node.sqlFragments.join('') : '';
      if (/^\s*insert into ledger_quarters/.test(text) && ++seen === 2) throw new Error('interrupted');
      return node;
    },
    transformResult: async ({ result }) => result,
  };
}

describe(`migration 015: the aggregates of an existing ledger (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: NOW, shop: { per_event_expiry: true } });
    await createCustomers(t, 5);
  });
  afterAll(() => t?.close());

  it('sums the events into the same days, and the totals into the same balances', async () => {
    const at = (days: number) => new Date(NOW - days * DAY).toISOString();
    const grants = Array.from({ length: 200 }, (_, i) => ({
      customer_identifier: String((i % 5) + 1),
      source: i % 2 ? 'order' : 'review',
      points_amount: 10 + i,
      credits_amount: i % 3,
      applied_at: at(i % 90),
      ...(i % 4 === 0 ? { expires_at: at((i % 90) - 5) } : {}),
    }));
    expect((await postBatch(t, grants)).statusCode).toBe(201);
    const deductions = Array.from({ length: 50 }, (_, i) => ({
      customer_identifier: String((i % 5) + 1),
      source: 'manual',
      points_amount: -3,
      applied_at: at(i),
    }));
    expect((await postBatch(t, deductions)).statusCode).toBe(201);
    expect(await sweepExpiredLots(t.database.db, NOW)).toBeGreaterThan(0);
    const before = await pointsReport(t, '2026-01-31', '2026-05-01');

    await migrateBefore015(t);
    expect(await migrateToLatest(t.database.db)).toContain('015_reports');

    expect(await pointsReport(t, '2026-01-31', '2026-05-01')).toEqual(before);
    expect(before.some((p) => p.points_expired! > 0) && before.some((p) => p.points_deducted! > 0)).toBe(true);
    expect(before.at(-1)!.points_outstanding_end).toBeGreaterThan(0);
    await expectConsistentLedger(t);
    expect((await t.request('GET', `${API}/shop`)).json().data.timezone).toBe('UTC');
  });

  it('starts a fill interrupted before the migration was recorded again, from empty aggregates', async () => {
    const before = await pointsReport(t, '2026-01-31', '2026-05-01');
    await migrateBefore015(t);
    // The schema committed, the quarters half filled, the migration not recorded.
    // Migrations write through the database's writer (the server reads through a connection of its own).
    await expect(m015.up(writerOf(t.database.db).withPlugin(failingSecondQuartersInsert()))).rejects.toThrow('interrupted');
    const filled = await t.database.db
      .selectFrom('ledger_quarters')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(filled.n)).toBeGreaterThan(0);
    expect(await migrateToLatest(t.database.db)).toContain('015_reports');
    expect(await pointsReport(t, '2026-01-31', '2026-05-01')).toEqual(before);
    await expectConsistentLedger(t);
  });
});
