import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ipLiteralOf, nonPublicKind, NonPublicAddressError, publicOnlyLookup } from '../../src/webhooks/address-guard.js';
import { fetchTransport, RETRY_DELAYS_MS } from '../../src/webhooks/delivery.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createWebhook, runJob, storedDeliveries, storeWebhookUrl } from './fixtures.js';

// The guard against server-side request forgery. Nothing here leaves the machine: refusals
// happen before any connection (a listener on 127.0.0.1 counts the connections it gets), and
// the only address ever connected to is that listener's, with the guard off. The API refuses
// such urls when they are IP literals (public-url.test.ts), so the refused deliveries below go
// to webhooks stored directly: written before that rule, or while private urls were allowed.

describe('the address classifier', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.5', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::127.0.0.1', 'reserved'],
    ['64:ff9b::a00:5', 'reserved'],
    ['2002:a00:5::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['not an address', 'reserved'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublicKind(address)).toBe(kind);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.1',
    '100.128.0.1',
    '93.184.216.34',
    '::ffff:8.8.8.8',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
  ])('%s is public', (address) => {
    expect(nonPublicKind(address)).toBeNull();
  });

  it('finds IP literals in URL hostnames', () => {
    expect(ipLiteralOf(new URL('http://[::1]:8080/x').hostname)).toBe('::1');
    expect(ipLiteralOf(new URL('http://2130706433/').hostname)).toBe('127.0.0.1');
    expect(ipLiteralOf(new URL('http://0x7f.1/').hostname)).toBe('127.0.0.1');
    expect(ipLiteralOf(new URL('http://[::ffff:127.0.0.1]/').hostname)).toBe('::ffff:7f00:1');
    expect(ipLiteralOf(new URL('https://hooks.example.com/').hostname)).toBeNull();
  });
});

describe('the lookup of guarded connections', () => {
  const lookup = (hostname: string, all: boolean) =>
    new Promise<unknown>((resolve, reject) => {
      publicOnlyLookup(hostname, { all }, ((err: Error | null, address: string | LookupAddress[], family?: number) =>
        err ? reject(err) : resolve(all ? address : { address, family })) as never);
    });

  it('refuses a name that resolves to loopback', async () => {
    for (const all of [true, false]) {
      const error = await lookup('localhost', all).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NonPublicAddressError);
      expect((error as NonPublicAddressError).kind).toBe('loopback');
      expect((error as Error).message).toMatch(/^address (127\.0\.0\.1|::1) \(of localhost\) is loopback; deliveries go only to public addresses$/);
    }
  });

  it('passes public addresses on, in both forms a socket asks for', async () => {
    // A numeric host resolves without DNS.
    expect(await lookup('93.184.216.34', true)).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await lookup('93.184.216.34', false)).toEqual({ address: '93.184.216.34', family: 4 });
  });
});

describe('the fetch transport', () => {
  let server: http.Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.writeHead(204).end());
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const send = (url: string, allowPrivateAddresses = false) => fetchTransport({ url, headers: {}, body: '{}', timeoutMs: 2000, allowPrivateAddresses });

  it.each([
    ['http://127.0.0.1:PORT/hook', 'address 127.0.0.1 is loopback'],
    ['http://[::1]:PORT/hook', 'address ::1 is loopback'],
    ['http://localhost:PORT/hook', 'is loopback'],
    ['http://[::ffff:127.0.0.1]:PORT/hook', 'address ::ffff:7f00:1 is loopback'],
    ['http://2130706433:PORT/hook', 'address 127.0.0.1 is loopback'],
    ['http://10.0.0.5/hook', 'address 10.0.0.5 is private'],
    ['http://169.254.169.254/latest/meta-data/', 'address 169.254.169.254 is link-local'],
    ['http://0.0.0.0:PORT/', 'address 0.0.0.0 is unspecified'],
    ['https://[fd00::1]/hook', 'address fd00::1 is private'],
  ])('refuses %s without connecting', async (url, message) => {
    const before = connections;
    const error = await send(url.replace('PORT', String(port))).catch((e: unknown) => e);
    const refusal = error instanceof NonPublicAddressError ? error : (error as { cause?: unknown }).cause;
    expect(refusal).toBeInstanceOf(NonPublicAddressError);
    expect((refusal as Error).message).toContain(message);
    expect((refusal as Error).message).toMatch(/; deliveries go only to public addresses$/);
    expect(connections).toBe(before);
  });

  it('reaches a local listener when private addresses are allowed', async () => {
    const before = connections;
    expect(await send(`http://127.0.0.1:${port}/hook`, true)).toEqual({ status: 204 });
    expect(connections).toBeGreaterThan(before);
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_URLS', () => {
  it('is off unless set', () => {
    expect(loadConfig({}).webhooks.allowPrivateUrls).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhooks.allowPrivateUrls).toBe(true);
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_URLS: 'maybe' })).toThrow(/WEBHOOK_ALLOW_PRIVATE_URLS/);
  });
});

describe(`refused deliveries (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let open: TestContext;
  let server: http.Server;
  let base: string;
  let received = 0;
  let connections = 0;

  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  beforeAll(async () => {
    t = await setup();
    open = await setup({ config: { webhooks: { ...loadConfig({}).webhooks, allowPrivateUrls: true } } });
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        res.writeHead(204).end();
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await t.close();
    await open.close();
  });

  const deliveriesOf = async (c: TestContext, webhookId: number, token: string) => {
    const res = await c.request('GET', `${API}/webhooks/${webhookId}/deliveries`, { token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data;
  };

  it('refuses every attempt to a private address, records it, and retries on the normal schedule', async () => {
    expect(t.config.webhooks.allowPrivateUrls).toBe(false);
    const shop = await t.createShop();
    const { id } = await createWebhook(t, 'customer.created', undefined, shop.token);
    await storeWebhookUrl(t, id, 'http://10.0.0.5/hooks');
    expect((await t.request('PUT', `${API}/customers/1`, { token: shop.token, body: {} })).statusCode).toBe(201);

    expect(await runJob(t, 'deliver-webhooks')).toMatchObject({ delivered: 0, retrying: 1, failed: 0 });
    let [row] = await storedDeliveries(t, shop.shop.id);
    expect(row).toMatchObject({ status: 'pending', attempt_count: 1, next_attempt_at: t.clock.now + RETRY_DELAYS_MS[0]! });

    t.clock.advance(RETRY_DELAYS_MS[0]!);
    await runJob(t, 'deliver-webhooks');
    [row] = await storedDeliveries(t, shop.shop.id);
    expect(row).toMatchObject({ status: 'pending', attempt_count: 2, next_attempt_at: t.clock.now + RETRY_DELAYS_MS[1]! });

    const [delivery] = await deliveriesOf(t, id, shop.token);
    expect(delivery.attempts).toHaveLength(2);
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ status_code: null, error: 'address 10.0.0.5 is private; deliveries go only to public addresses' });
    }
  });

  it.each([
    ['loopback', '127.0.0.1', /^address 127\.0\.0\.1 is loopback; deliveries go only to public addresses$/],
    ['IPv6 loopback', '[::1]', /^address ::1 is loopback; /],
    ['IPv4-mapped loopback', '[::ffff:127.0.0.1]', /^address ::ffff:7f00:1 is loopback; /],
    ['a name that resolves to loopback', 'localhost', /^address (127\.0\.0\.1|::1) \(of localhost\) is loopback; /],
    ['cloud metadata', '169.254.169.254', /^address 169\.254\.169\.254 is link-local; /],
  ])('refuses %s without connecting', async (_name, host, error) => {
    const shop = await t.createShop();
    const port = new URL(base).port;
    const { id } = await createWebhook(t, 'customer.created', undefined, shop.token);
    await storeWebhookUrl(t, id, `http://${host}:${port}/hooks`);
    expect((await t.request('PUT', `${API}/customers/1`, { token: shop.token, body: {} })).statusCode).toBe(201);
    const before = connections;
    await runJob(t, 'deliver-webhooks');
    expect(connections).toBe(before);
    expect(received).toBe(0);
    const [delivery] = await deliveriesOf(t, id, shop.token);
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(delivery.attempts[0].status_code).toBeNull();
    expect(delivery.attempts[0].error).toMatch(error);
  });

  it('delivers to the local listener when WEBHOOK_ALLOW_PRIVATE_URLS is true', async () => {
    expect(open.config.webhooks.allowPrivateUrls).toBe(true);
    const { id } = await createWebhook(open, 'customer.created', `${base}/hooks`);
    expect((await open.request('PUT', `${API}/customers/1`, { body: {} })).statusCode).toBe(201);
    expect(await runJob(open, 'deliver-webhooks')).toMatchObject({ delivered: 1 });
    expect(received).toBe(1);
    const [delivery] = await deliveriesOf(open, id, open.token);
    expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 1 });
    expect(delivery.attempts[0]).toMatchObject({ status_code: 204, error: null });
  });
});
