import { execFile } from 'node:child_process';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNats, type NatsServer } from '../../bench/lib/nats.js';
import { MAIN } from '../../bench/lib/server.js';
import { recordStreamEvents } from '../../src/events/outbox.js';
import { STREAM_NAME, StreamRelay, streamBacklog } from '../../src/events/stream.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { start } from '../helpers/server.js';

// The event stream (DESIGN 18) against a real JetStream (a nats-server -js of this file's own, so
// that it can be killed and started again) on the real database: every event the outbox records
// reaches the stream LOYALTY exactly once, in order per shop, whatever happens to the broker or
// to a serving process.

const quiet = { info: () => {}, warn: () => {} };
const STREAM_ENV = { EVENT_STREAM_POLL_MS: '20', EVENT_STREAM_LEASE_MS: '1000' };

interface Message {
  seq: number;
  subject: string;
  msgId: string | undefined;
  body: string;
}

describe(`event stream (${TEST_DIALECT})`, () => {
  let nats: NatsServer;
  let t: TestContext;
  let relay: StreamRelay;
  let other: TestContext['createShop'] extends (...a: any[]) => Promise<infer S> ? S : never;
  beforeAll(async () => {
    nats = await startNats();
    t = await setup({ config: { eventStream: { url: nats.url, pollMs: 20, leaseMs: 1000 } } });
    other = await t.createShop({ name: 'Other shop' });
    relay = new StreamRelay(t.database.db, { url: nats.url, pollMs: 20, leaseMs: 1000, log: quiet });
    relay.start();
  }, 60_000);
  afterAll(async () => {
    await relay?.stop();
    recordStreamEvents(false);
    await t?.close();
    await nats?.close();
  });

  /** Every message of the stream, in the stream's order. */
  async function streamMessages(): Promise<Message[]> {
    const nc = await natsConnect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      const { state } = await jsm.streams.info(STREAM_NAME);
      const out: Message[] = [];
      for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(STREAM_NAME, { seq });
        if (m !== null) out.push({ seq, subject: m.subject, msgId: m.header.get('Nats-Msg-Id'), body: m.string() });
      }
      return out;
    } finally {
      await nc.close();
    }
  }

  /** The outbox's events, in order per shop. */
  const recorded = async () =>
    (
      await sql<{
        shop_id: number;
        event_id: string;
        topic: string;
        payload: string;
      }>`select shop_id, event_id, topic, payload from stream_events order by shop_id, id`.execute(t.database.db)
    ).rows;

  async function drained(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while ((await streamBacklog(t.database.db)) > 0) {
      if (Date.now() > deadline) throw new Error(`backlog still ${await streamBacklog(t.database.db)} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The stream holds every recorded event exactly once, each shop's in the order recorded, bodies as the webhook's. */
  async function expectExactlyOnce(): Promise<number> {
    const rows = await recorded();
    const messages = await streamMessages();
    expect(messages.map((m) => m.msgId).sort()).toEqual(rows.map((r) => r.event_id).sort());
    const byId = new Map(rows.map((r) => [r.event_id, r]));
    for (const m of messages) {
      const row = byId.get(m.msgId!)!;
      expect(m.subject).toBe(`loyalty.${row.shop_id}.${row.topic}`);
      expect(m.body).toBe(row.payload);
    }
    for (const shop of new Set(rows.map((r) => Number(r.shop_id)))) {
      const inStream = messages.filter((m) => m.subject.startsWith(`loyalty.${shop}.`)).map((m) => m.msgId);
      expect(inStream).toEqual(rows.filter((r) => Number(r.shop_id) === shop).map((r) => r.event_id));
    }
    return messages.length;
  }

  const put = (token: string, id: number, email: string) => t.request('PUT', `${API}/customers/${id}`, { token, body: { email } });
  const backlogMetric = async () => Number(/^loyalty_event_stream_backlog (\d+)$/m.exec((await t.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1]);

  it('publishes every event, subscribed or not, in order per shop, as loyalty.<shop_id>.<topic> with the webhook body and Nats-Msg-Id', async () => {
    for (let i = 1; i <= 5; i++) {
      expect((await put(t.token, i, `a${i}@example.com`)).statusCode).toBe(201);
      expect((await put(other.token, i, `b${i}@example.com`)).statusCode).toBe(201);
    }
    expect((await put(t.token, 1, 'a1-new@example.com')).statusCode).toBe(200);
    const grant = await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '2', source: 'manual', points_amount: 10 } });
    expect(grant.statusCode).toBe(201);
    await drained();
    expect(await expectExactlyOnce()).toBe((await recorded()).length);
    const topics = (await recorded()).filter((r) => Number(r.shop_id) === t.shop.id).map((r) => r.topic);
    expect(topics).toEqual([...Array(5).fill('customer.created'), 'customer.updated', 'points_event.created']);
    const body = JSON.parse((await recorded()).find((r) => r.topic === 'points_event.created')!.payload);
    expect(body).toMatchObject({ topic: 'points_event.created', shop_id: t.shop.id, data: grant.json().data });
    expect(await backlogMetric()).toBe(0);

    const status = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [MAIN, 'stream', 'status', '--json'],
        { env: { ...process.env, DATABASE_URL: t.url, EVENT_STREAM_URL: nats.url, LOG_LEVEL: 'silent' } },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
    const last = (await recorded()).at(-1)!;
    expect(JSON.parse(status)).toMatchObject({
      enabled: true,
      backlog: 0,
      oldest_pending_at: null,
      last_published: { event_id: expect.stringMatching(/^evt_/) },
    });
    expect((await recorded()).map((r) => r.event_id)).toContain(JSON.parse(status).last_published.event_id);
    expect(last).toBeDefined();
  });

  it('with the broker away, writes go on, the backlog waits and shows in /metrics, and drains once it is back', async () => {
    await nats.kill();
    for (let i = 10; i < 30; i++) expect((await put(t.token, i, `away${i}@example.com`)).statusCode).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(await streamBacklog(t.database.db)).toBe(20);
    expect(await backlogMetric()).toBe(20);
    await nats.start();
    await drained();
    await expectExactlyOnce();
    expect(await backlogMetric()).toBe(0);
  });

  it('two relays sending small batches, several at a time: every event exactly once, in order per shop, and no lease left', async () => {
    await relay.stop();
    // What each relay saw acknowledged: no event is published by both (a shop is leased to one).
    const acknowledged = [new Set<string>(), new Set<string>()];
    const small = [0, 1].map(
      (n) =>
        new StreamRelay(t.database.db, {
          url: nats.url,
          pollMs: 5,
          leaseMs: 1000,
          batch: 7 * (n + 1),
          inFlight: 3,
          log: quiet,
          onPublished: (event) => acknowledged[n]!.add(event.event_id),
        }),
    );
    for (const r of small) r.start();
    try {
      for (let i = 100; i < 105; i++) for (const token of [t.token, other.token]) expect((await put(token, i, `small${i}@example.com`)).statusCode).toBe(201);
      const batch = (round: number) => ({
        points_events: Array.from({ length: 40 }, (_, e) => ({ customer_identifier: String(100 + (e % 5)), source: 'manual', points_amount: 1 + round + e })),
      });
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(
          [t.token, other.token].map((token) => t.request('POST', `${API}/points_events/batch`, { token, body: batch(round) })),
        );
        expect(answers.map((a) => a.statusCode)).toEqual([201, 201]);
      }
      await drained();
    } finally {
      await Promise.all(small.map((r) => r.stop()));
    }
    expect(await expectExactlyOnce()).toBe((await recorded()).length);
    expect([...acknowledged[0]!].filter((id) => acknowledged[1]!.has(id))).toEqual([]);
    expect(acknowledged[0]!.size + acknowledged[1]!.size).toBeGreaterThanOrEqual(400);
    expect(await t.database.db.selectFrom('stream_leases').selectAll().execute()).toEqual([]);
  });

  it('two serving processes, one killed with kill -9 in the middle of 500 writes and restarted: every event exactly once, in order per shop', async () => {
    await relay.stop();
    const env = { EVENT_STREAM_URL: nats.url, ...STREAM_ENV };
    // Started on a busy machine (other test files run beside this one) the processes may take a while.
    const slow = { readyTimeoutMs: 90_000 };
    const [first, b] = await Promise.all([start(t.url, env, slow), start(t.url, env, slow)]);
    let a = first;
    const tokens = [t.token, other.token];
    let failed = 0;
    const send = async (n: number) => {
      const server = n % 2 === 0 ? a : b;
      try {
        const res = await fetch(`${server.url}${API}/customers/${1000 + n}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${tokens[n % 4 < 2 ? 0 : 1]}`, 'content-type': 'application/json' },
          body: JSON.stringify({ email: `kill${n}@example.com` }),
        });
        if (res.status !== 201) failed++;
      } catch {
        failed++;
      }
    };
    // One write at a time, to either process in turn (SQLite's writers in two processes wait on
    // each other by sleeping); each process's relay publishes meanwhile.
    for (let n = 0; n < 500; n++) {
      if (n === 300) a = await start(t.url, env, slow);
      // Killed with a write in flight: it committed or not, and the stream holds what committed.
      if (n === 250) setTimeout(() => a.child.kill('SIGKILL'), 3);
      await send(n);
    }
    // The killed process's requests failed; none of the others did.
    expect(failed).toBeGreaterThanOrEqual(24);
    expect(failed).toBeLessThanOrEqual(25);
    await drained();
    const count = await expectExactlyOnce();
    expect(count).toBe((await recorded()).length);
    await Promise.all([a.stop(), b.stop()]);
  }, 240_000);
});
