import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, createWebhook, FakeTransport, grant, runJob, storedDeliveries } from '../webhooks/fixtures.js';
import { verify } from './load.js';

// Webhook endpoints that hang or answer slowly, and backlogs of one topic: neither holds up
// other endpoints' deliveries, other topics' or API requests. The delivery job runs over real
// HTTP against receivers of the test's own (hanging, slow, prompt), and over a recording
// transport for the order in which a backlog is served.

const TIMEOUT_MS = 3000;

interface Receiver {
  base: string;
  /** When each path received a delivery, in ms since `since`. */
  received: Map<string, number[]>;
  since: number;
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const received = new Map<string, number[]>();
  const hanging = new Set<http.ServerResponse>();
  const r = { since: performance.now() } as Receiver;
  const server = http.createServer((req, res) => {
    req.resume();
    const at = performance.now() - r.since;
    received.set(req.url!, [...(received.get(req.url!) ?? []), at]);
    if (req.url === '/hang') hanging.add(res);
    else if (req.url === '/slow') setTimeout(() => res.end('ok'), 300);
    else res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(r, {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
      }),
  });
}

describe(`a hanging webhook endpoint (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let r: Receiver;
  beforeAll(async () => {
    r = await receiver();
    t = await setup({ config: { webhooks: { deliveryIntervalMs: 0, timeoutMs: TIMEOUT_MS, batchSize: 8, retentionDays: 30, allowPrivateUrls: true } } });
  });
  afterAll(async () => {
    await t?.close();
    await r?.close();
  });

  it("delays neither other endpoints' deliveries nor API requests, and records its own attempts as failures with their cause", async () => {
    await createCustomers(t, [1]);
    const hang = await createWebhook(t, 'customer.updated', `${r.base}/hang`);
    const fast = await createWebhook(t, 'points_event.created', `${r.base}/fast`);
    const slow = await createWebhook(t, 'points_event.created', `${r.base}/slow`);
    // Two deliveries for the hanging endpoint, queued first, then six for each of the others.
    for (const name of ['Ada', 'Grace']) expect((await t.request('PUT', `${API}/customers/1`, { body: { first_name: name } })).statusCode).toBe(200);
    const res = await t.request('POST', `${API}/points_events/batch`, { body: { points_events: Array.from({ length: 6 }, () => grant(1, 1)) } });
    expect(res.statusCode).toBe(201);

    r.since = performance.now();
    const job = runJob(t, 'deliver-webhooks');
    // API requests while the hanging endpoint holds its sends open.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const requests = [];
    for (let i = 0; i < 3; i++) {
      const sent = performance.now();
      const answer = await t.request('POST', `${API}/points_events`, { body: grant(1, 1) });
      requests.push({ status: answer.statusCode, ms: performance.now() - sent });
    }
    await job;

    expect(requests.map((q) => q.status)).toEqual([201, 201, 201]);
    for (const q of requests) expect(q.ms).toBeLessThan(TIMEOUT_MS / 2);
    // The prompt endpoint had all of its deliveries before the hanging one's first send timed out.
    const fastTimes = r.received.get('/fast') ?? [];
    expect(fastTimes.length).toBe(9);
    expect(Math.max(...fastTimes.slice(0, 6))).toBeLessThan(TIMEOUT_MS);
    // The slow one (300 ms each, two at a time) went on beside the hanging one's sends too.
    expect(Math.max(...(r.received.get('/slow') ?? []).slice(0, 6))).toBeLessThan(TIMEOUT_MS);

    const byWebhook = (id: number) => storedDeliveries(t).then((all) => all.filter((d) => d.webhook_id === id));
    expect((await byWebhook(fast.id)).map((d) => d.status)).toEqual(Array(9).fill('delivered'));
    expect((await byWebhook(slow.id)).map((d) => d.status)).toEqual(Array(9).fill('delivered'));
    const hung = await byWebhook(hang.id);
    expect(hung.map((d) => [d.status, d.attempt_count])).toEqual(Array(2).fill(['pending', 1]));
    const listed = await t.request('GET', `${API}/webhooks/${hang.id}/deliveries`);
    for (const delivery of listed.json().data) {
      expect(delivery.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: null, error: `timed out after ${TIMEOUT_MS} ms` })]);
    }
    console.log(
      `[fault] hanging webhook: prompt endpoint's first 6 deliveries within ${Math.round(Math.max(...fastTimes.slice(0, 6)))} ms; API writes meanwhile ${requests.map((q) => Math.round(q.ms)).join('/')} ms; hanging endpoint's 2 attempts recorded as timeouts`,
    );
    expect(await verify(t.url)).toEqual({ ok: true, discrepancies: [] });
  });
});

describe(`webhook deliveries served in turns (${TEST_DIALECT})`, () => {
  let t: TestContext;
  const transport = new FakeTransport();
  beforeAll(async () => {
    t = await setup({
      webhookTransport: transport.send,
      config: { webhooks: { deliveryIntervalMs: 0, timeoutMs: 5000, batchSize: 4, retentionDays: 30, allowPrivateUrls: false } },
    });
  });
  afterAll(() => t?.close());

  it("sends a customer.redacted at once, not behind an import's backlog of another topic or webhook", async () => {
    const created = await createWebhook(t, 'customer.created', 'https://example.com/created');
    const redacted = await createWebhook(t, 'customer.redacted', 'https://example.com/redacted');
    const updated = await createWebhook(t, 'customer.updated', 'https://example.com/updated');
    // The backlog: 60 customers created (and one of them updated), queued first.
    const ids = Array.from({ length: 60 }, (_, i) => i + 1);
    await createCustomers(t, ids);
    expect((await t.request('PUT', `${API}/customers/1`, { body: { first_name: 'Ada' } })).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await t.request('DELETE', `${API}/customers/2`)).statusCode).toBe(200);

    // A run of the job ends when its time is up (a loaded machine may need several runs).
    for (let run = 0; run < 62 && transport.requests.length < 62; run++) await runJob(t, 'deliver-webhooks');
    const order = transport.requests.map((request) => request.headers['loyalty-topic']);
    expect(order).toHaveLength(62);
    // Each group is served in turn: the redaction and the update go out in the first claim,
    // beside the backlog's oldest, not after its 60 deliveries.
    expect(order.indexOf('customer.redacted')).toBeLessThan(4);
    expect(order.indexOf('customer.updated')).toBeLessThan(4);
    const stored = await storedDeliveries(t);
    expect(stored.every((d) => d.status === 'delivered')).toBe(true);
    expect(new Set(stored.map((d) => d.webhook_id))).toEqual(new Set([created.id, redacted.id, updated.id]));
  });
});
