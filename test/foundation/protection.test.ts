import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { connect } from '../../src/db/connect.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { connectRaw, type RawConnection } from '../helpers/raw-http.js';
import { lagFloor } from '../../src/http/overload.js';

const WINDOW_MS = 60_000;

describe(`per-shop rate limit (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { rateLimit: { max: 3, windowMs: WINDOW_MS, redisUrl: null } } });
  });
  afterAll(() => t.close());

  it('counts down in RateLimit-* headers, then answers 429 rate_limited with Retry-After', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.request('GET', `${API}/shop`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(WINDOW_MS / 1000);
      remaining.push(String(res.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const limited = await t.request('GET', `${API}/shop`);
    expect(limited.statusCode).toBe(429);
    expect(errorOf(limited)).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(errorOf(limited).request_id).toBe(limited.headers['x-request-id']);
    expect(errorOf(limited).message).toMatch(/3 requests per 60 seconds/);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_MS / 1000);
    expect(limited.headers['ratelimit-limit']).toBe('3');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    // Writes are limited as well, before their body is even looked at.
    const write = await t.request('PATCH', `${API}/shop`, { body: { nonsense: true } });
    expect(write.statusCode).toBe(429);
  });

  it('limits each shop on its own count', async () => {
    const b = await t.createShop({ name: 'Shop B' });
    expect((await t.request('GET', `${API}/shop`)).statusCode).toBe(429);
    const res = await t.request('GET', `${API}/shop`, { token: b.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe('2');
  });

  it('does not limit requests without a valid token or outside the API', async () => {
    expect((await t.request('GET', `${API}/shop`, { token: 'unknown' })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).headers['ratelimit-limit']).toBeUndefined();
  });
});

const REDIS_URL = 'redis://127.0.0.1:6379';

async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

const redisUp = await redisAnswers();
if (!redisUp) process.stdout.write(`Skipping the shared rate-limit test: Redis does not answer a ping at ${REDIS_URL}\n`);

describe.runIf(redisUp)(`rate limit shared through Redis (${TEST_DIALECT})`, () => {
  it("counts a shop's requests across two app instances", async () => {
    const t = await setup({ config: { rateLimit: { max: 4, windowMs: WINDOW_MS, redisUrl: REDIS_URL } } });
    const secondDb = connect(t.url);
    const second = await buildApp(t.config, { database: secondDb });
    const redis = new Redis(REDIS_URL);
    try {
      // Shop ids restart at 1 in every test database; start from a clean count.
      await redis.del(`loyalty-rl:shop:${t.shop.id}`);
      const viaSecond = () => second.inject({ method: 'GET', url: `${API}/shop`, headers: { authorization: `Bearer ${t.token}` } });
      expect((await t.request('GET', `${API}/shop`)).headers['ratelimit-remaining']).toBe('3');
      expect((await viaSecond()).headers['ratelimit-remaining']).toBe('2');
      expect((await t.request('GET', `${API}/shop`)).headers['ratelimit-remaining']).toBe('1');
      expect((await viaSecond()).statusCode).toBe(200);
      const limited = await t.request('GET', `${API}/shop`);
      expect(limited.statusCode).toBe(429);
      expect(errorOf(limited).code).toBe('rate_limited');
      expect((await viaSecond()).statusCode).toBe(429);
    } finally {
      await redis.del(`loyalty-rl:shop:${t.shop.id}`);
      redis.disconnect();
      await second.close();
      await secondDb.close();
      await t.close();
    }
  });
});

/** A request whose headers have arrived and whose body never does: in flight until closed. */
async function stalledRequest(port: number, token: string): Promise<RawConnection> {
  const connection = await connectRaw(port);
  connection.socket.write(
    `PATCH ${API}/shop HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
  );
  return connection;
}

/** Blocks the event loop, as a CPU-bound request would. */
function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

describe(`load shedding (${TEST_DIALECT})`, () => {
  it('answers 503 unavailable with Retry-After once the event loop lags past the limit', async () => {
    const t = await setup({ config: { loadShedding: { ...loadConfig({}).loadShedding, maxEventLoopDelayMs: 1, retryAfterSeconds: 7 } } });
    try {
      // Shedding works on the server's own requests, before Fastify: over a socket, not inject.
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const get = () => fetch(`${base}${API}/shop`, { headers: { authorization: `Bearer ${t.token}` } });
      // Alone, a request is served however late the loop is: lag sheds only beside as many
      // requests in flight as the floor below.
      busyWait(300);
      const alone = await get();
      expect(alone.status).toBe(200);
      await alone.arrayBuffer();
      const port = Number(new URL(base).port);
      // As many requests in flight as lag's floor: max(LAG_TURN_REQUESTS, MIN_CONCURRENCY, the database's connections).
      const floor = lagFloor(t.database.connections);
      const held = await Promise.all(Array.from({ length: floor }, () => stalledRequest(port, t.token)));
      // The lag is sampled on a timer; block the loop until a sample has seen it.
      let res = await get();
      for (let attempt = 0; attempt < 30 && res.status !== 503; attempt++) {
        await res.arrayBuffer();
        busyWait(300);
        await new Promise((resolve) => setTimeout(resolve, 20));
        res = await get();
      }
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: { request_id: string } };
      expect(body.error).toMatchObject({ type: 'api_error', code: 'unavailable' });
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      for (const connection of held) connection.socket.destroy();
    } finally {
      await t.close();
    }
  });
});
