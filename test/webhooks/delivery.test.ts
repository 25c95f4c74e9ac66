import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/delivery.js';
import { verifySignature } from '../../src/webhooks/signature.js';
import { API, DAY, errorOf, setup, type TestContext, type TestShop } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, createWebhook, FakeTransport, grant, runJob, storedDeliveries } from './fixtures.js';

// The delivery job over a fake transport and the test clock: signing, retries with backoff,
// claims that never send a delivery twice, and the merchant's view of deliveries.

describe(`webhook delivery (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  const transport = new FakeTransport();
  beforeAll(async () => {
    t = await setup({
      webhookTransport: transport.send,
      config: { webhooks: { deliveryIntervalMs: 0, timeoutMs: 5000, batchSize: 4, retentionDays: 30, allowPrivateUrls: false } },
    });
  });
  afterAll(() => t.close());

  /**
   * A shop of its own with customer 1 and a points_event.created webhook, and a clean
   * transport. The job works across shops: what earlier tests left pending is settled first.
   */
  async function shop(): Promise<TestShop & { webhook: { id: number; secret: string } }> {
    await t.database.db.updateTable('webhook_deliveries').set({ status: 'delivered', next_attempt_at: null }).where('status', '=', 'pending').execute();
    const s = await t.createShop();
    await createCustomers(t, [1], s.token);
    const webhook = await createWebhook(t, 'points_event.created', 'https://example.com/hooks/loyalty', s.token);
    transport.requests.length = 0;
    transport.script = [];
    transport.fallback = 200;
    transport.during = null;
    return { ...s, webhook };
  }

  const grantPoints = async (s: TestShop, count: number) => {
    const res = await t.request('POST', `${API}/points_events/batch`, {
      token: s.token,
      body: { points_events: Array.from({ length: count }, () => grant(1, 1)) },
    });
    expect(res.statusCode).toBe(201);
    return res.json().data;
  };

  const listDeliveries = async (s: TestShop, webhookId: number, query: Record<string, string> = {}) => {
    const res = await t.request('GET', `${API}/webhooks/${webhookId}/deliveries`, { token: s.token, query });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('POSTs the event signed with the secret shown at creation', async () => {
    const s = await shop();
    const [event] = await grantPoints(s, 1);
    await runJob(t, 'deliver-webhooks');
    expect(transport.requests).toHaveLength(1);
    const request = transport.requests[0]!;
    expect(request.url).toBe('https://example.com/hooks/loyalty');
    expect(request.timeoutMs).toBe(5000);
    const [stored] = await storedDeliveries(t, s.shop.id);
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'loyalty-topic': 'points_event.created',
      'loyalty-delivery-id': String(stored!.id),
      'loyalty-event-id': stored!.event_id,
    });
    const body = JSON.parse(request.body);
    expect(body).toEqual({
      id: stored!.event_id,
      topic: 'points_event.created',
      shop_id: s.shop.id,
      created_at: new Date(t.clock.now).toISOString(),
      data: event,
    });

    // The receiver's recipe, written out with node:crypto alone.
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(request.headers['loyalty-signature']!);
    expect(match).not.toBeNull();
    expect(Number(match![1])).toBe(Math.floor(t.clock.now / 1000));
    expect(match![2]).toBe(createHmac('sha256', s.webhook.secret).update(`${match![1]}.${request.body}`).digest('hex'));

    const now = Math.floor(t.clock.now / 1000);
    expect(verifySignature(s.webhook.secret, request.headers['loyalty-signature']!, request.body, now)).toBe(true);
    expect(verifySignature(`${s.webhook.secret}x`, request.headers['loyalty-signature']!, request.body, now)).toBe(false);
    expect(verifySignature(s.webhook.secret, request.headers['loyalty-signature']!, request.body.replace('"points_amount":1', '"points_amount":9'), now)).toBe(
      false,
    );
    expect(verifySignature(s.webhook.secret, request.headers['loyalty-signature']!, request.body, now + 301)).toBe(false);

    const listed = await listDeliveries(s, s.webhook.id);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({
      id: stored!.id,
      status: 'delivered',
      attempt_count: 1,
      next_attempt_at: null,
      delivered_at: new Date(t.clock.now).toISOString(),
      payload: body,
    });
    expect(listed.data[0].attempts).toEqual([
      { attempt: 1, attempted_at: new Date(t.clock.now).toISOString(), status_code: 200, error: null, duration_ms: expect.any(Number) },
    ]);
  });

  it('retries a failing delivery with exponential backoff until it succeeds', async () => {
    const s = await shop();
    await grantPoints(s, 1);
    const start = t.clock.now;
    transport.script = [500, new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }), 204];
    try {
      await runJob(t, 'deliver-webhooks');
      let [row] = await storedDeliveries(t, s.shop.id);
      expect(row).toMatchObject({ status: 'pending', attempt_count: 1, next_attempt_at: start + RETRY_DELAYS_MS[0]! });

      // Not due yet: nothing is sent.
      t.clock.advance(RETRY_DELAYS_MS[0]! - 1);
      await runJob(t, 'deliver-webhooks');
      expect(transport.requests).toHaveLength(1);

      t.clock.advance(1);
      await runJob(t, 'deliver-webhooks');
      [row] = await storedDeliveries(t, s.shop.id);
      expect(row).toMatchObject({ status: 'pending', attempt_count: 2, next_attempt_at: start + RETRY_DELAYS_MS[0]! + RETRY_DELAYS_MS[1]! });
      expect(RETRY_DELAYS_MS[1]!).toBeGreaterThan(RETRY_DELAYS_MS[0]!);

      t.clock.advance(RETRY_DELAYS_MS[1]!);
      await runJob(t, 'deliver-webhooks');
      [row] = await storedDeliveries(t, s.shop.id);
      expect(row).toMatchObject({ status: 'delivered', attempt_count: 3 });
      expect(transport.requests).toHaveLength(3);
      // Every attempt carries the same delivery and event ids, so the receiver can drop duplicates.
      expect(new Set(transport.requests.map((r) => r.headers['loyalty-delivery-id'])).size).toBe(1);
      expect(new Set(transport.requests.map((r) => r.body)).size).toBe(1);

      const [listed] = (await listDeliveries(s, s.webhook.id)).data;
      expect(listed.attempts.map((a: any) => [a.attempt, a.status_code, a.error])).toEqual([
        [1, 500, 'the endpoint answered HTTP 500'],
        [2, null, 'ECONNREFUSED'],
        [3, 204, null],
      ]);
    } finally {
      t.clock.now = start;
    }
  });

  it('marks a delivery failed after about three days of retries, and a manual retry sends it again', async () => {
    const s = await shop();
    await grantPoints(s, 1);
    const start = t.clock.now;
    transport.fallback = 503;
    try {
      for (let i = 0; i < MAX_ATTEMPTS; i++) {
        await runJob(t, 'deliver-webhooks');
        if (i < RETRY_DELAYS_MS.length) t.clock.advance(RETRY_DELAYS_MS[i]!);
      }
      expect(transport.requests).toHaveLength(MAX_ATTEMPTS);
      const span = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
      expect(span).toBeGreaterThan(2.5 * DAY);
      expect(span).toBeLessThanOrEqual(3 * DAY);
      let [row] = await storedDeliveries(t, s.shop.id);
      expect(row).toMatchObject({ status: 'failed', attempt_count: MAX_ATTEMPTS, next_attempt_at: null });
      t.clock.advance(DAY);
      await runJob(t, 'deliver-webhooks');
      expect(transport.requests).toHaveLength(MAX_ATTEMPTS);

      transport.fallback = 200;
      const retried = await t.request('POST', `${API}/webhooks/${s.webhook.id}/deliveries/${row!.id}/retry`, { token: s.token });
      expect(retried.statusCode, retried.body).toBe(202);
      expect(retried.json().data).toMatchObject({ id: row!.id, status: 'pending', next_attempt_at: new Date(t.clock.now).toISOString() });
      await runJob(t, 'deliver-webhooks');
      [row] = await storedDeliveries(t, s.shop.id);
      expect(row).toMatchObject({ status: 'delivered', attempt_count: MAX_ATTEMPTS + 1 });
    } finally {
      t.clock.now = start;
    }
  });

  it('lists the deliveries of one status, in both pagination modes, and names a bad status', async () => {
    const s = await shop();
    await grantPoints(s, 3);
    transport.script = [200, 500, 200];
    await runJob(t, 'deliver-webhooks');
    const ids = (await storedDeliveries(t, s.shop.id)).map((row) => ({ id: Number(row.id), status: row.status }));
    expect(ids.map((row) => row.status)).toEqual(['delivered', 'pending', 'delivered']);
    const of = (status: string) => ids.filter((row) => row.status === status).map((row) => row.id);
    const modes: Record<string, string>[] = [{}, { 'pagination[limit]': '1' }, { 'pagination[per_page]': '1', 'pagination[page]': '2' }];
    for (const mode of modes) {
      const delivered = await listDeliveries(s, s.webhook.id, { ...mode, status: 'delivered' });
      expect(delivered.data.map((d: { id: number }) => d.id)).toEqual(
        'pagination[page]' in mode ? of('delivered').slice(1) : 'pagination[limit]' in mode ? of('delivered').slice(0, 1) : of('delivered'),
      );
    }
    expect((await listDeliveries(s, s.webhook.id, { status: 'pending' })).data).toMatchObject([{ id: of('pending')[0], status: 'pending' }]);
    expect((await listDeliveries(s, s.webhook.id, { status: 'failed' })).data).toEqual([]);
    const bad = await t.request('GET', `${API}/webhooks/${s.webhook.id}/deliveries`, { token: s.token, query: { status: 'lost' } });
    expect(bad.statusCode).toBe(400);
    expect(errorOf(bad)).toMatchObject({ code: 'invalid_parameter', details: [{ param: 'status' }] });
  });

  it('never sends a delivery twice when job runs race', async () => {
    const s = await shop();
    await grantPoints(s, 30);
    // Each send yields, so the runs interleave: both claim while the other is sending.
    transport.during = () => new Promise((resolve) => setTimeout(resolve, 1));
    await Promise.all([runJob(t, 'deliver-webhooks'), runJob(t, 'deliver-webhooks'), runJob(t, 'deliver-webhooks')]);
    const sent = transport.deliveryIds();
    const rows = await storedDeliveries(t, s.shop.id);
    expect(sent).toHaveLength(30);
    expect(new Set(sent).size).toBe(30);
    expect(rows.every((r) => r.status === 'delivered' && r.attempt_count === 1)).toBe(true);
  });

  it('stops the deliveries of a deleted webhook, also one deleted while sending', async () => {
    const s = await shop();
    await grantPoints(s, 2);
    expect((await t.request('DELETE', `${API}/webhooks/${s.webhook.id}`, { token: s.token })).statusCode).toBe(200);
    await runJob(t, 'deliver-webhooks');
    expect(transport.requests).toEqual([]);
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);

    const other = await createWebhook(t, 'points_event.created', undefined, s.token);
    await grantPoints(s, 1);
    transport.during = async () => {
      expect((await t.request('DELETE', `${API}/webhooks/${other.id}`, { token: s.token })).statusCode).toBe(200);
    };
    transport.fallback = 500;
    await runJob(t, 'deliver-webhooks');
    expect(transport.requests).toHaveLength(1);
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);
  });

  it("lists a webhook's deliveries with cursor and offset pagination", async () => {
    const s = await shop();
    await grantPoints(s, 12);
    const all = (await storedDeliveries(t, s.shop.id)).map((r) => r.id);
    expect(all).toHaveLength(12);
    const seen: number[] = [];
    let since = 0;
    for (;;) {
      const page = await listDeliveries(s, s.webhook.id, { 'pagination[since_id]': String(since), 'pagination[limit]': '5' });
      seen.push(...page.data.map((d: any) => d.id));
      if (page.links.next_since_id === null) break;
      since = page.links.next_since_id;
    }
    expect(seen).toEqual(all);
    const last = await listDeliveries(s, s.webhook.id, { 'pagination[page]': '3', 'pagination[per_page]': '5' });
    expect(last.data.map((d: any) => d.id)).toEqual(all.slice(10));
    expect(last.links.next).toBeNull();
    expect(last.data[0]).toMatchObject({ webhook_id: s.webhook.id, status: 'pending', attempt_count: 0, attempts: [] });
    const bad = await t.request('GET', `${API}/webhooks/${s.webhook.id}/deliveries`, { token: s.token, query: { 'pagination[limit]': '0' } });
    expect(bad.statusCode).toBe(400);
  });

  it("answers 404 for another shop's webhook, its deliveries and unknown ones", async () => {
    const s = await shop();
    await grantPoints(s, 1);
    const [row] = await storedDeliveries(t, s.shop.id);
    const intruder = await t.createShop();
    const paths = [
      ['GET', `${API}/webhooks/${s.webhook.id}/deliveries`],
      ['POST', `${API}/webhooks/${s.webhook.id}/deliveries/${row!.id}/retry`],
    ] as const;
    for (const [method, path] of paths) {
      const res = await t.request(method, path, { token: intruder.token });
      expect(res.statusCode, path).toBe(404);
      expect(errorOf(res).code).toBe('not_found');
    }
    const other = await createWebhook(t, 'points_event.created', undefined, s.token);
    for (const path of [`${API}/webhooks/${other.id}/deliveries/${row!.id}/retry`, `${API}/webhooks/${s.webhook.id}/deliveries/999999/retry`]) {
      expect((await t.request('POST', path, { token: s.token })).statusCode, path).toBe(404);
    }
    expect(errorOf(await t.request('POST', `${API}/webhooks/x/deliveries/1/retry`, { token: s.token })).code).toBe('invalid_parameter');
    expect((await t.request('GET', `${API}/webhooks/${s.webhook.id}/deliveries`, { token: null })).statusCode).toBe(401);
  });

  it('prunes settled deliveries after the retention period and keeps pending ones', async () => {
    const s = await shop();
    await grantPoints(s, 2);
    transport.script = [200, 500];
    await runJob(t, 'deliver-webhooks');
    const start = t.clock.now;
    try {
      t.clock.advance(29 * DAY);
      await runJob(t, 'prune-webhook-deliveries');
      expect(await storedDeliveries(t, s.shop.id)).toHaveLength(2);
      t.clock.advance(2 * DAY);
      await runJob(t, 'prune-webhook-deliveries');
      const rows = await storedDeliveries(t, s.shop.id);
      expect(rows.map((r) => r.status)).toEqual(['pending']);
      const attempts = await t.database.db.selectFrom('webhook_attempts').select('delivery_id').where('shop_id', '=', s.shop.id).execute();
      expect(attempts.map((a) => Number(a.delivery_id))).toEqual([rows[0]!.id]);
    } finally {
      t.clock.now = start;
    }
  });
});
