import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoyaltyClient, LoyaltyApiError } from '../../client/src/index.js';
import { abortableSleep } from '../../client/src/retry.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// Retries against the real server: a response lost after the write was applied, the rate
// limit's 429 with Retry-After, and 503s without it.

const WINDOW_MS = 2000;

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

interface Forwarded {
  method: string;
  key: string | undefined;
  status: number;
  replayed: string | undefined;
}

/** A proxy to `target` that, for the first POST, lets the server answer and then drops the answer (the connection closes). */
function droppingProxy(target: string, log: Forwarded[]): http.Server {
  let dropped = false;
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) });
      const text = await upstream.text();
      log.push({
        method: req.method!,
        key: req.headers['idempotency-key'] as string | undefined,
        status: upstream.status,
        replayed: upstream.headers.get('idempotent-replayed') ?? undefined,
      });
      if (req.method === 'POST' && !dropped) {
        dropped = true;
        req.socket.destroy();
        return;
      }
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
        'x-request-id': upstream.headers.get('x-request-id') ?? '',
      });
      res.end(text);
    });
  });
}

describe(`the typed client's retries (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let baseUrl: string;
  const proxies: http.Server[] = [];
  beforeAll(async () => {
    t = await setup();
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
    await t.request('PUT', `${API}/customers/501`, { body: { email: 'lin@example.com' } });
  });
  afterAll(async () => {
    for (const proxy of proxies) proxy.close();
    await t.close();
  });

  it('retries a POST whose response was lost with the same Idempotency-Key: the balance rises once', async () => {
    const log: Forwarded[] = [];
    const proxy = droppingProxy(baseUrl, log);
    proxies.push(proxy);
    const slept: number[] = [];
    const client = createLoyaltyClient({ baseUrl: await listen(proxy), token: t.token, sleep: async (ms) => void slept.push(ms) });

    const event = await client.POST(`${API}/points_events`, { body: { customer_identifier: '501', source: 'manual', points_amount: 75 } });

    expect(event.data).toMatchObject({ points_amount: 75 });
    expect(log.map(({ method, status, replayed }) => ({ method, status, replayed }))).toEqual([
      { method: 'POST', status: 201, replayed: undefined },
      { method: 'POST', status: 201, replayed: 'true' },
    ]);
    expect(log[0]!.key).toMatch(/^[0-9a-f]{32}$/);
    expect(log[1]!.key).toBe(log[0]!.key);
    expect(slept).toHaveLength(1);
    const customer = (await t.request('GET', `${API}/customers/501`)).json();
    expect(customer.data.points_balance).toBe(75);
    const events = (await t.request('GET', `${API}/customers/501/points_events`)).json();
    expect(events.data).toHaveLength(1);
  });

  it("waits for its own earlier attempt on a 409 idempotency_key_in_use, and not for another request's", async () => {
    const inUse = () =>
      new Response(JSON.stringify({ error: { type: 'idempotency_error', code: 'idempotency_key_in_use', message: 'Still running', request_id: 'req_fake' } }), {
        status: 409,
      });
    const keys: (string | null)[] = [];
    let calls = 0;
    const client = createLoyaltyClient({
      baseUrl,
      token: t.token,
      sleep: async () => {},
      fetch: async (input, init) => {
        keys.push(new Headers(init.headers).get('idempotency-key'));
        calls++;
        if (calls === 1) throw new TypeError('fetch failed');
        return calls === 2 ? inUse() : fetch(input, init);
      },
    });
    const event = await client.POST(`${API}/points_events`, { body: { customer_identifier: '501', source: 'manual', points_amount: 5 } });
    expect(event.data.points_amount).toBe(5);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);

    const other = createLoyaltyClient({ baseUrl, token: t.token, sleep: async () => {}, fetch: async () => (calls++, inUse()) });
    calls = 0;
    const body = { customer_identifier: '501', source: 'manual' as const, points_amount: 5 };
    await expect(other.POST(`${API}/points_events`, { body, headers: { 'Idempotency-Key': 'mine' } })).rejects.toMatchObject({
      status: 409,
      code: 'idempotency_key_in_use',
    });
    expect(calls).toBe(1);
  });
});

describe(`the typed client's backoff (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, server): they run in order.
  let t: TestContext;
  let baseUrl: string;
  beforeAll(async () => {
    // A window of two seconds, so that Retry-After says 1 or 2.
    t = await setup({ config: { rateLimit: { max: 3, windowMs: WINDOW_MS, redisUrl: null } } });
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => t.close());

  it('waits as long as Retry-After says on a 429, then succeeds', async () => {
    const waits: number[] = [];
    const retryAfter: (string | null)[] = [];
    const client = createLoyaltyClient({
      baseUrl,
      token: t.token,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        if (response.status === 429) retryAfter.push(response.headers.get('retry-after'));
        return response;
      },
      sleep: (ms, signal) => {
        waits.push(ms);
        return abortableSleep(ms, signal);
      },
    });
    // A fresh window, then one more request than it allows.
    await abortableSleep(WINDOW_MS, new AbortController().signal);
    const started = Date.now();
    for (let i = 0; i < 4; i++) await client.GET(`${API}/shop`);
    expect(retryAfter.length).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter[0])).toBeGreaterThanOrEqual(1);
    expect(waits[0]).toBe(Number(retryAfter[0]) * 1000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(waits[0]!);
  });

  it('does not wait for a Retry-After beyond maxDelayMs: the 429 is thrown at once', async () => {
    const waits: number[] = [];
    const client = createLoyaltyClient({ baseUrl, token: t.token, retry: { maxDelayMs: 500 }, sleep: async (ms) => void waits.push(ms) });
    await abortableSleep(WINDOW_MS, new AbortController().signal);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.GET(`${API}/shop`)));
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as LoyaltyApiError);
    expect(refused.length).toBeGreaterThanOrEqual(2);
    for (const error of refused) expect(error).toMatchObject({ status: 429, code: 'rate_limited', requestId: expect.stringMatching(/^req_/) });
    expect(waits).toEqual([]);
  });

  it('backs off exponentially on 503 without Retry-After, and gives up after the attempts', async () => {
    await abortableSleep(WINDOW_MS, new AbortController().signal);
    const unavailable = () =>
      new Response(JSON.stringify({ error: { type: 'api_error', code: 'unavailable', message: 'Overloaded', request_id: 'req_fake' } }), { status: 503 });
    let calls = 0;
    const waits: number[] = [];
    const flaky = createLoyaltyClient({
      baseUrl,
      token: t.token,
      retry: { attempts: 4, baseDelayMs: 100 },
      fetch: async (input, init) => (++calls <= 2 ? unavailable() : fetch(input, init)),
      sleep: async (ms) => void waits.push(ms),
    });
    await expect(flaky.GET(`${API}/shop`)).resolves.toMatchObject({ data: { id: t.shop.id } });
    expect(calls).toBe(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(50);
    expect(waits[0]).toBeLessThanOrEqual(100);
    expect(waits[1]).toBeGreaterThanOrEqual(100);
    expect(waits[1]).toBeLessThanOrEqual(200);

    let down = 0;
    const dead = createLoyaltyClient({ baseUrl, token: t.token, retry: { attempts: 3 }, fetch: async () => (down++, unavailable()), sleep: async () => {} });
    await expect(dead.GET(`${API}/shop`)).rejects.toMatchObject({ status: 503, code: 'unavailable', requestId: 'req_fake' });
    expect(down).toBe(3);

    const unreachable = createLoyaltyClient({ baseUrl: 'http://127.0.0.1:9', token: t.token, retry: { attempts: 2 }, sleep: async () => {} });
    await expect(unreachable.GET(`${API}/shop`)).rejects.toMatchObject({ status: 0, code: 'network_error', requestId: null });
  });
});
