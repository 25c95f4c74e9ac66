import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { findShopByToken, shopsGeneration, type Shop } from '../shops/repository.js';
import { AuthFailures } from './auth-failures.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The shop whose token authenticated the request (set on every /merchant_api/v1 route). */
    shop: Shop;
  }
}

/** Accepts both `Authorization: <token>` and `Authorization: Bearer <token>`. */
export function tokenFromHeader(header: string | undefined): string | null {
  if (header === undefined) return null;
  const value = header.trim();
  const match = /^bearer\s+(.+)$/i.exec(value);
  const token = (match ? match[1]! : value).trim();
  return token === '' ? null : token;
}

/**
 * How long a token found live is trusted without asking the database again. Revoking a token
 * or changing a shop in this process takes effect at once (shopsGeneration); done by another
 * process (the CLI, another API process) it takes effect within this time.
 */
export const TOKEN_CACHE_MS = 2000;
const TOKEN_CACHE_SIZE = 10_000;

interface Cached {
  shop: Shop;
  until: number;
  generation: number;
}

/**
 * Live tokens seen lately: one database lookup per token every TOKEN_CACHE_MS at most. Keyed by
 * the token as sent, so a hit costs no hash; the process holds those tokens only as long as
 * the requests that carried them would.
 */
class TokenCache {
  readonly #entries = new Map<string, Cached>();

  get(token: string): Shop | undefined {
    const cached = this.#entries.get(token);
    if (cached === undefined) return undefined;
    if (cached.generation === shopsGeneration() && performance.now() < cached.until) return cached.shop;
    this.#entries.delete(token);
    return undefined;
  }

  set(token: string, shop: Shop, generation: number): void {
    if (this.#entries.size >= TOKEN_CACHE_SIZE) this.#entries.clear();
    // Shared by the requests that follow: frozen so that none can change it for the others.
    this.#entries.set(token, { shop: Object.freeze(shop), until: performance.now() + TOKEN_CACHE_MS, generation });
  }
}

async function authenticate(app: FastifyInstance, request: FastifyRequest, cache: TokenCache, failures: AuthFailures): Promise<void> {
  const token = tokenFromHeader(request.headers.authorization);
  if (token === null) {
    throw new AppError('unauthorized', 'Send your API token in the Authorization header: "Authorization: Bearer <token>"');
  }
  let shop = cache.get(token);
  if (shop === undefined) {
    failures.check(request.ip);
    // Taken before the lookup: a change made meanwhile makes this entry stale at once.
    const generation = shopsGeneration();
    shop = await findShopByToken(app.db, token);
    if (shop === undefined) {
      failures.record(request.ip);
      throw new AppError('unauthorized', 'The API token is unknown or has been revoked');
    }
    cache.set(token, shop, generation);
  }
  request.shop = shop;
}

/** Every route registered in this scope requires a live token. */
export function registerAuth(app: FastifyInstance): void {
  const cache = new TokenCache();
  const failures = new AuthFailures(app.config.authFailures.max, app.config.authFailures.windowMs);
  app.decorateRequest('shop', null as unknown as Shop);
  app.addHook('onRequest', async (request) => authenticate(app, request, cache, failures));
}
