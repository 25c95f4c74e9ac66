import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { verifySignature } from '../../src/webhooks/signature.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createWebhook, runJob, storedDeliveries } from './fixtures.js';

// The production transport (fetch) against a real HTTP listener on 127.0.0.1, which only
// WEBHOOK_ALLOW_PRIVATE_URLS lets deliveries reach.

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe(`webhook delivery over HTTP (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let server: http.Server;
  let base: string;
  const received: Received[] = [];
  let status = 204;

  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  beforeAll(async () => {
    t = await setup({ config: { webhooks: { ...loadConfig({}).webhooks, allowPrivateUrls: true } } });
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(status).end('thanks');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  it("POSTs a signed delivery that the receiver verifies with the webhook's secret", async () => {
    const { id, secret } = await createWebhook(t, 'customer.created', `${base}/hooks/loyalty?shop=1`);
    const created = await t.request('PUT', `${API}/customers/42`, { body: { email: 'ada@example.com', first_name: 'Ada' } });
    expect(created.statusCode).toBe(201);

    status = 500;
    await runJob(t, 'deliver-webhooks');
    expect(received).toHaveLength(1);
    let [row] = await storedDeliveries(t);
    expect(row).toMatchObject({ status: 'pending', attempt_count: 1 });

    status = 204;
    t.clock.advance(60_000);
    await runJob(t, 'deliver-webhooks');
    expect(received).toHaveLength(2);
    const request = received[1]!;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/hooks/loyalty?shop=1');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['loyalty-topic']).toBe('customer.created');
    expect(request.headers['loyalty-delivery-id']).toBe(String(row!.id));
    expect(verifySignature(secret, String(request.headers['loyalty-signature']), request.body, Math.floor(t.clock.now / 1000))).toBe(true);
    expect(verifySignature(secret, String(received[0]!.headers['loyalty-signature']), request.body, Math.floor(t.clock.now / 1000))).toBe(true);
    const body = JSON.parse(request.body);
    expect(body).toMatchObject({ topic: 'customer.created', shop_id: t.shop.id, data: created.json().data });

    [row] = await storedDeliveries(t);
    expect(row).toMatchObject({ status: 'delivered', attempt_count: 2 });
    const listed = await t.request('GET', `${API}/webhooks/${id}/deliveries`);
    expect(listed.json().data[0].attempts.map((a: any) => a.status_code)).toEqual([500, 204]);
  });

  it('records a refused connection as a failed attempt', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const shop = await t.createShop();
    await createWebhook(t, 'customer.created', `http://127.0.0.1:${port}/gone`, shop.token);
    expect((await t.request('PUT', `${API}/customers/1`, { token: shop.token, body: {} })).statusCode).toBe(201);
    await runJob(t, 'deliver-webhooks');
    const [row] = await storedDeliveries(t, shop.shop.id);
    expect(row).toMatchObject({ status: 'pending', attempt_count: 1 });
    const attempt = await t.database.db.selectFrom('webhook_attempts').selectAll().where('shop_id', '=', shop.shop.id).executeTakeFirstOrThrow();
    expect(attempt.status_code).toBeNull();
    expect(attempt.error).toBe('ECONNREFUSED');
  });
});
