import rateLimit from '@fastify/rate-limit';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { sendError } from './error-handler.js';

/**
 * Load shedding: when the event loop lags past the limit, answer 503 with Retry-After at once
 * rather than queueing work the client will have given up on.
 */
export async function registerLoadShedding(app: FastifyInstance, config: Config): Promise<void> {
  if (config.loadShedding.maxEventLoopDelayMs <= 0) return;
  const retryAfter = config.loadShedding.retryAfterSeconds;
  await app.register(underPressure, {
    maxEventLoopDelay: config.loadShedding.maxEventLoopDelayMs,
    retryAfter,
    pressureHandler: (_request, reply) => {
      sendError(reply, new AppError('unavailable', 'The service is overloaded; retry after the time in Retry-After', { headers: { 'retry-after': String(retryAfter) } }));
    },
  });
}

/**
 * Per-shop rate limit, counted after authentication. In memory by default; in Redis when
 * REDIS_URL is set, so that every API process shares the count.
 */
export async function registerRateLimit(scope: FastifyInstance, config: Config): Promise<void> {
  const redis = config.rateLimit.redisUrl
    ? new Redis(config.rateLimit.redisUrl, { connectTimeout: 2000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
    : undefined;
  if (redis) {
    redis.on('error', (err) => scope.log.warn({ err }, 'rate limit store unavailable'));
    scope.addHook('onClose', async () => {
      redis.disconnect();
    });
  }
  await scope.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: config.rateLimit.max,
    timeWindow: config.rateLimit.windowMs,
    keyGenerator: (request) => `shop:${request.shop.id}`,
    enableDraftSpec: true,
    // A rate-limit store that is down must not take the API down with it.
    skipOnError: true,
    ...(redis ? { redis, nameSpace: 'loyalty-rl:' } : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Rate limit of ${context.max} requests per ${context.after} exceeded; retry after the time in Retry-After`),
  });
}
