import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { findShopByToken, type Shop } from '../shops/repository.js';

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

async function authenticate(app: FastifyInstance, request: FastifyRequest): Promise<void> {
  const token = tokenFromHeader(request.headers.authorization);
  if (token === null) {
    throw new AppError('unauthorized', 'Send your API token in the Authorization header: "Authorization: Bearer <token>"');
  }
  const shop = await findShopByToken(app.db, token);
  if (shop === undefined) throw new AppError('unauthorized', 'The API token is unknown or has been revoked');
  request.shop = shop;
}

/** Every route registered in this scope requires a live token. */
export function registerAuth(app: FastifyInstance): void {
  app.decorateRequest('shop', null as unknown as Shop);
  app.addHook('onRequest', async (request) => authenticate(app, request));
}
