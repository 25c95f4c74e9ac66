import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { sweepExpiredLots } from '../../src/ledger/expiry.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, countRows, createCustomers, expectConsistentLedger, postBatch } from './fixtures.js';

// A batch writes its rows with few statements, the tables together: on PostgreSQL under load
// every round trip of a write transaction costs a turn of the event loop, and the rows and ids
// it has locked are held for all the round trips that follow.

describe('a batch larger than one statement of rows', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { batchMaxEvents: 6000 } });
    await createCustomers(t, 3);
  });
  afterAll(async () => t?.close());

  it('writes every event, lot and consumption, and the balances they add up to', async () => {
    // 6000 events and 6000 lots: more than a PostgreSQL statement takes (5000 rows).
    const grants = Array.from({ length: 6000 }, (_, i) => ({ customer_identifier: String((i % 3) + 1), source: 'order', points_amount: 2 }));
    expect((await postBatch(t, grants)).statusCode).toBe(201);
    // Each deduction takes two lots: 6000 consumptions, every lot emptied.
    const deductions = Array.from({ length: 3000 }, (_, i) => ({ customer_identifier: String((i % 3) + 1), source: 'refund', points_amount: -4 }));
    const res = await postBatch(t, deductions);
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toHaveLength(3000);
    expect([await countRows(t, 'points_events'), await countRows(t, 'points_lots'), await countRows(t, 'lot_consumptions')]).toEqual([9000, 6000, 6000]);
    for (const id of [1, 2, 3]) expect(await balanceOf(t, id)).toEqual({ points: 0, credits: 0 });
    const customer = (await t.request('GET', `${API}/customers/2`)).json().data;
    expect([customer.points_earned_lifetime, customer.points_spent_lifetime]).toEqual([4000, 4000]);
    await expectConsistentLedger(t);
  });
});

describe.runIf(TEST_DIALECT === 'postgres')("a batch's statements (postgres)", () => {
  let t: TestContext;
  beforeAll(async () => {
    // Points expire, for the sweep to write off.
    t = await setup({ shop: { points_expiry_days: 30 } });
    await createCustomers(t, 1000);
  });
  afterAll(async () => t?.close());
  afterEach(() => vi.restoreAllMocks());

  /** The statements of the first write transaction `act` makes, from BEGIN to COMMIT. */
  async function statementsOf(act: () => Promise<unknown>): Promise<string[]> {
    const query = vi.spyOn(pg.Client.prototype, 'query');
    await act();
    const texts = query.mock.calls.map(([config]) => (typeof config === 'string' ? config : (config as { text: string }).text).trim().toLowerCase());
    const begin = texts.indexOf('begin');
    return texts.slice(begin, texts.indexOf('commit', begin) + 1);
  }

  /** The statements of a batch's write transaction. */
  const transactionOf = (events: unknown[]) => statementsOf(async () => expect((await postBatch(t, events)).statusCode).toBe(201));

  const grants = (n: number) => Array.from({ length: n }, (_, i) => ({ customer_identifier: String(i + 1), source: 'order', points_amount: 10 }));

  it("holds the customers it locked for four statements, and the shop's ids for two", async () => {
    const statements = await transactionOf(grants(1000));
    const locked = statements.findIndex((s) => s.includes('for update'));
    const ids = statements.findIndex((s) => s.includes('pg_advisory_xact_lock'));
    expect(locked).toBeGreaterThan(0);
    // The balances and earned days; the ids; the events and lots with the request's audit entry
    // (docs/access.md: in the write's transaction); commit.
    expect(statements.length - 1 - locked).toBe(4);
    expect(statements.length - 1 - ids).toBe(2);
    expect(statements.at(-2)).toMatch(/insert into "points_events"/);
    expect(statements.at(-2)).toMatch(/insert into "audit_events"/);
    expect(statements.filter((s) => s.includes('"audit_events"'))).toHaveLength(1);
  });

  it('makes as many statements for 1000 events as for 2', async () => {
    expect((await transactionOf(grants(1000))).length).toBe((await transactionOf(grants(2))).length);
  });

  it("has the expiry sweep hold the shop's event ids for two statements", async () => {
    t.clock.advance(31 * DAY);
    let written = 0;
    const statements = await statementsOf(async () => (written = await sweepExpiredLots(t.database.db, t.clock.now, 10)));
    expect(written).toBeGreaterThan(0);
    // The events and their consumptions; commit.
    expect(statements.length - 1 - statements.findIndex((s) => s.includes('pg_advisory_xact_lock'))).toBe(2);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t));
});
