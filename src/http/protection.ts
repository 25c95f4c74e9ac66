import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { AuthFailures } from './auth-failures.js';

// The per-shop rate limit of the merchant API: a fixed window per shop, counted after
// authentication and before the body is parsed, so refused writes count as well. In this
// process by default; in Redis when REDIS_URL is set, so that every API process shares the
// count. Every answer says where the shop stands in RateLimit-* headers (the IETF draft's
// names, as the storefront's limits send them too).
//
// A synchronous hook, not @fastify/rate-limit: its async hook, the promise around the store's
// callback and the awaits of its key and limit functions cost every request 15-25 µs of CPU
// (an empty list page: 187-208 µs with it, 171-184 µs without), for a counter that is one Map
// lookup here.

/** Whole seconds until `ms` have passed, rounded up; the milliseconds are cut first (times from performance.now() are fractional). */
const secondsUntil = (ms: number) => Math.max(0, Math.ceil(Math.floor(ms) / 1000));

/** RateLimit-* headers: the limit, what is left of it, and the seconds until the window starts anew. */
export function rateLimitHeaders(reply: FastifyReply, max: number, count: number, resetInMs: number): void {
  reply
    .header('ratelimit-limit', max)
    .header('ratelimit-remaining', Math.max(0, max - count))
    .header('ratelimit-reset', secondsUntil(resetInMs));
}

/** INCR with the window's expiry set by the request that starts it (and on a key that lost its expiry). */
const INCREMENT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

type Counted = { count: number; resetInMs: number };

interface RateRedis extends Redis {
  rateLimitIncrement(key: string, windowMs: number): Promise<[number, number]>;
}

/** Connects to Redis before the first request, so the first requests are counted too. */
async function connectRedis(app: FastifyInstance, url: string): Promise<RateRedis> {
  // Loaded only here: a server without REDIS_URL never holds the client (8 MB).
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true }) as RateRedis;
  redis.defineCommand('rateLimitIncrement', { numberOfKeys: 1, lua: INCREMENT });
  redis.on('error', (err) => app.log.warn({ err }, 'rate limit store unavailable'));
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  await redis.connect().catch((err) => app.log.warn({ err }, 'rate limit store unavailable at start; requests are not limited until it answers'));
  return redis;
}

/** Per-shop rate limit on the scope's routes, after its authentication hook. */
export async function registerRateLimit(scope: FastifyInstance, config: Config): Promise<void> {
  const { max, windowMs, redisUrl } = config.rateLimit;
  const refusal = (resetInMs: number) =>
    new AppError('rate_limited', `Rate limit of ${max} requests per ${windowMs / 1000} seconds exceeded; retry after the time in Retry-After`, {
      headers: { 'retry-after': String(Math.max(1, secondsUntil(resetInMs))) },
    });
  const answer = (reply: FastifyReply, { count, resetInMs }: Counted): AppError | undefined => {
    rateLimitHeaders(reply, max, count, resetInMs);
    return count > max ? refusal(resetInMs) : undefined;
  };

  if (redisUrl === null) {
    const windows = new AuthFailures(max, windowMs);
    scope.addHook('preParsing', (request, reply, payload, done) => {
      const now = performance.now();
      const window = windows.record(`shop:${request.shop.id}`, now);
      done(answer(reply, { count: window.failures, resetInMs: window.resetAt - now }), payload);
    });
    return;
  }

  const redis = await connectRedis(scope, redisUrl);
  scope.addHook('preParsing', (request, reply, payload, done) => {
    redis.rateLimitIncrement(`loyalty-rl:shop:${request.shop.id}`, windowMs).then(
      ([count, resetInMs]) => done(answer(reply, { count, resetInMs }), payload),
      // A rate-limit store that is down must not take the API down with it.
      () => done(undefined, payload),
    );
  });
}
