import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lostRaceErrors } from '../../src/records/conflicts.js';
import { vipTiers } from '../../src/records/resources/vip-tiers.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// Two writers race for a unique value: both pass the precheck, one write fails on the unique
// index. The loser is told which field clashes, found by the precheck run again once its
// transaction is over, as if it had come second (VIP tiers have two unique fields).

const taken = (param: string) => ({
  param,
  code: `${param}_taken`,
  message: `Another VIP tier of this shop already has this ${param.replace(/_/g, ' ')}`,
});

describe(`a write that lost a race for a unique value (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let goldId: number;
  beforeAll(async () => {
    t = await setup();
    const res = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 } });
    expect(res.statusCode, res.body).toBe(201);
    goldId = res.json().data.id;
  });
  afterAll(() => t.close());

  describe('the fields it reports', () => {
    const errorsOf = (id: number | null, values: Record<string, unknown>) => lostRaceErrors(t.database.db, t.shop.id, vipTiers, { id, values });

    it('names only the field another record now holds', async () => {
      expect(await errorsOf(null, { name: 'Gold', points_threshold: 2000 })).toEqual([taken('name')]);
      expect(await errorsOf(null, { name: 'Silver', points_threshold: 1000 })).toEqual([taken('points_threshold')]);
      expect(await errorsOf(null, { name: 'Gold', points_threshold: 1000 })).toEqual([taken('name'), taken('points_threshold')]);
    });

    it("judges a PATCH by the values it changes, not the record's own", async () => {
      const silver = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Silver', points_threshold: 500 } });
      const silverId = silver.json().data.id;
      expect(await errorsOf(silverId, { points_threshold: 1000 })).toEqual([taken('points_threshold')]);
      expect(await errorsOf(goldId, { name: 'Silver' })).toEqual([taken('name')]);
    });

    it('names every unique field when nothing clashes any more (the other record is gone)', async () => {
      expect(await errorsOf(null, { name: 'Bronze', points_threshold: 10 })).toEqual([taken('name'), taken('points_threshold')]);
    });

    it('is scoped to the shop', async () => {
      const other = await t.createShop();
      expect(await lostRaceErrors(t.database.db, other.shop.id, vipTiers, { id: null, values: { name: 'Gold', points_threshold: 2000 } })).toHaveLength(2);
    });
  });

  // A real race, made deterministic: the clashing row is inserted, uncommitted, by another
  // connection, so the precheck misses it and the write waits on the unique index until that
  // row commits. SQLite serialises writers (one connection, BEGIN IMMEDIATE), so its precheck
  // always sees the other writer's row: the race cannot happen there.
  describe.skipIf(TEST_DIALECT !== 'postgres')('over HTTP', () => {
    async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error('the write never waited on the uncommitted row');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }

    /** Runs `write` while another connection holds `row` uncommitted in vip_tiers, and commits it once the write waits on it. */
    async function racedBy<T>(row: { id: number; name: string; points_threshold: number }, write: () => Promise<T>): Promise<T> {
      const other = new pg.Client({ connectionString: t.url });
      const watcher = new pg.Client({ connectionString: t.url });
      await other.connect();
      await watcher.connect();
      try {
        await other.query('begin');
        await other.query('insert into vip_tiers (shop_id, id, name, points_threshold, created_at, updated_at) values ($1, $2, $3, $4, $5, $5)', [
          t.shop.id,
          row.id,
          row.name,
          row.points_threshold,
          t.clock.now,
        ]);
        const pending = write();
        await waitUntil(async () => {
          const { rows } = await watcher.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%vip_tiers%'`,
          );
          return rows[0]!.n > 0;
        });
        await other.query('commit');
        return await pending;
      } finally {
        await other.end();
        await watcher.end();
      }
    }

    it('reports only the name a concurrent create took (with an Idempotency-Key, which stays unused)', async () => {
      const headers = { 'idempotency-key': 'race-1' };
      const res = await racedBy({ id: 900_000, name: 'Platinum', points_threshold: 5000 }, () =>
        t.request('POST', `${API}/vip_tiers`, { headers, body: { name: 'Platinum', points_threshold: 7000 } }),
      );
      expect(res.statusCode, res.body).toBe(422);
      expect(errorOf(res)).toMatchObject({ code: 'validation_failed', details: [taken('name')] });
      // A failed request stores nothing: the same key may be used again.
      const retry = await t.request('POST', `${API}/vip_tiers`, { headers, body: { name: 'Diamond', points_threshold: 7000 } });
      expect(retry.statusCode, retry.body).toBe(201);
    });

    it('reports only the points_threshold a concurrent write took from a PATCH', async () => {
      const created = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Iron', points_threshold: 20 } });
      const id = created.json().data.id;
      const res = await racedBy({ id: 900_001, name: 'Steel', points_threshold: 30 }, () =>
        t.request('PATCH', `${API}/vip_tiers/${id}`, { body: { points_threshold: 30 } }),
      );
      expect(res.statusCode, res.body).toBe(422);
      expect(errorOf(res)).toMatchObject({ code: 'validation_failed', details: [taken('points_threshold')] });
      expect((await t.request('GET', `${API}/vip_tiers/${id}`)).json().data).toMatchObject({ name: 'Iron', points_threshold: 20 });
    });
  });
});
