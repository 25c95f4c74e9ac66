import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';

/** Connects to Redis before the first request, so the first requests are counted too. */
async function connectRedis(app: FastifyInstance, url: string): Promise<Redis> {
  // Loaded only here: a server without REDIS_URL never holds the client (8 MB).
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
  redis.on('error', (err) => app.log.warn({ err }, 'rate limit store unavailable'));
  app.addHook('onClose', async () => {
    redis.disconnect();
  });
  await redis.connect().catch((err) => app.log.warn({ err }, 'rate limit store unavailable at start; requests are not limited until it answers'));
  return redis;
}

/**
 * Per-shop rate limit, counted after authentication. In memory by default; in Redis when
 * REDIS_URL is set, so that every API process shares the count.
 */
export async function registerRateLimit(scope: FastifyInstance, config: Config): Promise<void> {
  const redis = config.rateLimit.redisUrl ? await connectRedis(scope, config.rateLimit.redisUrl) : undefined;
  await scope.register(rateLimit, {
    global: true,
    // Before the body is parsed and validated, so rejected requests count as well. Route hooks
    // of this phase run after the scope's onRequest hook that authenticates.
    hook: 'preParsing',
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.windowMs,
    keyGenerator: (request) => `shop:${request.shop.id}`,
    enableDraftSpec: true,
    // A rate-limit store that is down must not take the API down with it.
    skipOnError: true,
    ...(redis ? { redis, nameSpace: 'loyalty-rl:' } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError(
        'rate_limited',
        `Rate limit of ${context.max} requests per ${config.rateLimit.windowMs / 1000} seconds exceeded; retry after the time in Retry-After`,
      ),
  });
}
