import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type ServerProcess } from '../../bench/lib/server.js';
import { setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, createCustomers, loyalty } from './fixtures.js';

// A real `loyalty serve` process (the compiled one: `npm test` builds first) is killed with
// SIGKILL in the middle of a stream of keyed batches, restarted, and every batch is retried
// with its key. Each batch must then be applied exactly once, and none half.

const CUSTOMERS = 20;
const BATCHES = 40;
const IN_FLIGHT = 4;
const KILL_AFTER = 12;

/** Batch b: for every customer, grant b + 1 points and 0.01 credits, then spend 1 point. */
function batch(b: number) {
  return Array.from({ length: CUSTOMERS }, (_, c) => [
    { customer_identifier: String(c + 1), source: 'order', points_amount: b + 1, credits_amount: 0.01, external_note: `batch ${b}` },
    { customer_identifier: String(c + 1), source: 'refund', points_amount: -1, external_note: `batch ${b}` },
  ]).flat();
}

async function send(server: ServerProcess, token: string, b: number): Promise<Response> {
  return fetch(`${server.url}/merchant_api/v1/points_events/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `crash-batch-${b}` },
    body: JSON.stringify({ points_events: batch(b) }),
  });
}

describe(`a server killed with SIGKILL mid-stream (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, CUSTOMERS);
  });
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await t.close();
  });

  it('applies every retried batch exactly once, none half', async () => {
    const first = await startServer(t.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' }, { capture: true });
    servers.push(first);
    let next = 0;
    let answered = 0;
    const killed = new Promise<void>((resolve) => first.child.once('exit', () => resolve()));
    const worker = async () => {
      while (next < BATCHES) {
        const b = next++;
        try {
          const res = await send(first, t.token, b);
          await res.text();
          if (res.status === 201 && ++answered === KILL_AFTER) first.child.kill('SIGKILL');
        } catch {
          // The connection died with the server; the batch is retried below.
        }
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    await killed;
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(answered).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(answered).toBeLessThan(BATCHES);

    const second = await startServer(t.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' }, { capture: true });
    servers.push(second);
    let replayed = 0;
    for (let b = 0; b < BATCHES; b++) {
      const res = await send(second, t.token, b);
      const body = (await res.json()) as { data: unknown[] };
      expect(res.status).toBe(201);
      expect(body.data).toHaveLength(2 * CUSTOMERS);
      if (res.headers.get('idempotent-replayed') === 'true') replayed++;
    }
    expect(replayed).toBeGreaterThanOrEqual(KILL_AFTER);
    await second.stop();

    // Each batch's events are all there, once.
    const perBatch = await t.database.db
      .selectFrom('points_events')
      .select(['external_note', (eb) => eb.fn.countAll<number>().as('n')])
      .where('shop_id', '=', t.shop.id)
      .groupBy('external_note')
      .execute();
    expect(perBatch).toHaveLength(BATCHES);
    for (const row of perBatch) expect(Number(row.n)).toBe(2 * CUSTOMERS);

    const points = (BATCHES * (BATCHES + 1)) / 2 - BATCHES;
    for (let c = 1; c <= CUSTOMERS; c++) expect(await balanceOf(t, c)).toEqual({ points, credits: BATCHES / 100 });
    const verify = await loyalty(t.url, 'verify', '--shop', String(t.shop.id), '--json');
    expect(JSON.parse(verify.stdout)).toEqual({ ok: true, discrepancies: [] });
    expect(verify.code).toBe(0);
  });
});
