import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, countRows, createCustomers, postBatch, postEvent, expectConsistentLedger } from './fixtures.js';

describe(`points events: exactly once and concurrent writers (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 10);
  });
  afterAll(() => t.close());

  it('applies 20 racing identical batches with one Idempotency-Key once', async () => {
    const events = Array.from({ length: 50 }, (_, i) => ({ customer_identifier: String((i % 10) + 1), source: 'manual', points_amount: 3 }));
    const before = await countRows(t, 'points_events');
    const responses = await Promise.all(Array.from({ length: 20 }, () => postBatch(t, events, { 'idempotency-key': 'batch-race' })));
    const applied = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(applied).toHaveLength(1);
    for (const r of responses) {
      if (r.statusCode === 409) expect(errorOf(r).code).toBe('idempotency_key_in_use');
      else expect(r.body).toBe(applied[0]!.body);
    }
    const retry = await postBatch(t, events, { 'idempotency-key': 'batch-race' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(applied[0]!.body);
    expect(await countRows(t, 'points_events')).toBe(before + 50);
    expect((await balanceOf(t, 1)).points).toBe(15);
  });

  it('applies 20 racing identical single events with one Idempotency-Key once', async () => {
    const body = { customer_identifier: '2', source: 'manual', points_amount: 1 };
    const before = (await balanceOf(t, 2)).points;
    const responses = await Promise.all(Array.from({ length: 20 }, () => postEvent(t, body, { 'idempotency-key': 'single-race' })));
    expect(responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(responses.every((r) => r.statusCode === 201 || r.statusCode === 409)).toBe(true);
    expect((await balanceOf(t, 2)).points).toBe(before + 1);
  });

  it('stores no response for a failed batch, so the key may be retried', async () => {
    const bad = [{ customer_identifier: '3', source: 'manual', points_amount: -1_000_000 }];
    const failed = await postBatch(t, bad, { 'idempotency-key': 'failed-once' });
    expect(failed.statusCode).toBe(422);
    await postEvent(t, { customer_identifier: '3', source: 'manual', points_amount: 1_000_000 });
    const retried = await postBatch(t, bad, { 'idempotency-key': 'failed-once' });
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('runs concurrent batches over the same customers without losing an update', async () => {
    for (let c = 1; c <= 10; c++) await postEvent(t, { customer_identifier: String(c), source: 'manual', points_amount: 100 });
    const start = await Promise.all(Array.from({ length: 10 }, (_, c) => balanceOf(t, c + 1)));
    const WRITERS = 12;
    // Each writer visits every customer in its own order: grant 10, then spend 7, which
    // comes out of the oldest lot (so writers update the same stored lots).
    const batches = Array.from({ length: WRITERS }, (_, w) =>
      Array.from({ length: 10 }, (_, k) => ((w % 2 === 0 ? k + w : 9 - k + w) % 10) + 1).flatMap((c) => [
        { customer_identifier: String(c), source: 'order', points_amount: 10 },
        { customer_identifier: String(c), source: 'refund', points_amount: -7 },
      ]),
    );
    const responses = await Promise.all(batches.map((events) => postBatch(t, events)));
    expect(responses.map((r) => r.statusCode)).toEqual(batches.map(() => 201));
    for (let c = 1; c <= 10; c++) expect((await balanceOf(t, c)).points).toBe(start[c - 1]!.points + WRITERS * 3);

    // Every event's recorded balance follows from the one before it: nothing interleaved.
    const rows = await t.database.db
      .selectFrom('points_events')
      .select(['customer_remote_id', 'points_amount', 'points_balance'])
      .where('shop_id', '=', t.shop.id)
      .orderBy('id')
      .execute();
    const running = new Map<number, number>();
    for (const row of rows) {
      const c = Number(row.customer_remote_id);
      const next = (running.get(c) ?? 0) + Number(row.points_amount);
      expect(Number(row.points_balance)).toBe(next);
      running.set(c, next);
    }
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
