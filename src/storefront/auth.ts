import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import { prepareQuery } from '../db/prepared.js';
import type { CustomersTable } from '../db/tables.js';
import { AuthFailures } from '../http/auth-failures.js';
import { TokenCache, tokenFromHeader } from '../http/auth.js';
import { shopsGeneration } from '../shops/repository.js';
import { CLOCK_SKEW_SECONDS, keptVerdict, refused, verifyCustomerToken } from './customer-tokens.js';
import { findLiveKey, keysGeneration, type LiveKey } from './keys.js';

// Who a storefront request is: the key (X-Publishable-Key, or the customer token's kid) and,
// on /me paths, the customer the token names. Sets request.shop as the merchant routes' auth
// does, so the services they share (pagination, idempotency, redemptions) serve both sides.

export const PUBLISHABLE_KEY_HEADER = 'x-publishable-key';

declare module 'fastify' {
  interface FastifyRequest {
    /** The storefront key the request came with (storefront routes only). */
    storefrontKey: LiveKey | null;
    /** The customer a storefront token names, as stored (storefront /me routes only). */
    customer: Selectable<CustomersTable> | null;
  }
  interface FastifyContextConfig {
    /** A storefront route that takes a publishable key and no customer (GET /programme). */
    publishable?: boolean;
  }
}

interface StorefrontAuth {
  /** The live key of a publishable key; undefined when it is unknown or revoked. */
  key(publishableKey: string, request: FastifyRequest): Promise<LiveKey | undefined>;
  /** The live key of a publishable key found lately; undefined when it must be looked up (key). */
  cached(publishableKey: string): LiveKey | undefined;
}

/**
 * Who a request of the scope is: every route requires a customer token, or, with
 * config.publishable, a publishable key. Returns the check, which the scope's one onRequest
 * hook runs (scope.ts); a preflight, which carries no credentials, is not checked.
 */
export function registerStorefrontAuth(app: FastifyInstance): (request: FastifyRequest) => Promise<void> {
  const keys = new TokenCache<LiveKey>(
    (pk) => findLiveKey(app.db, pk),
    () => shopsGeneration() + keysGeneration(),
  );
  const failures = new AuthFailures(app.config.authFailures.max, app.config.authFailures.windowMs);
  const auth: StorefrontAuth = {
    async key(publishableKey, request) {
      const cached = keys.cached(publishableKey);
      if (cached !== undefined) return cached;
      failures.check(request.ip);
      return keys.lookUp(publishableKey);
    },
    cached: (publishableKey) => keys.cached(publishableKey),
  };
  app.decorateRequest('storefrontKey', null);
  app.decorateRequest('customer', null);
  return async (request) => {
    try {
      await (request.routeOptions.config.publishable ? byPublishableKey(request, auth) : byCustomerToken(request, auth));
    } catch (error) {
      failures.record(request.ip);
      throw error;
    }
  };
}

async function byPublishableKey(request: FastifyRequest, auth: StorefrontAuth): Promise<void> {
  const header = request.headers[PUBLISHABLE_KEY_HEADER];
  const key = typeof header === 'string' && header.length <= 64 ? await auth.key(header, request) : undefined;
  if (key === undefined) throw refused();
  request.storefrontKey = key;
  request.shop = key.shop;
}

/** The customer a token names, read in every storefront request: built and compiled once. */
const customerRow = prepareQuery<{ shopId: number; remoteId: number }, Selectable<CustomersTable>>((db, p) =>
  db.selectFrom('customers').selectAll().where('shop_id', '=', p.value('shopId')).where('remote_id', '=', p.value('remoteId')),
);

async function byCustomerToken(request: FastifyRequest, auth: StorefrontAuth): Promise<void> {
  const token = tokenFromHeader(request.headers.authorization);
  if (token === null || token.length > 4096) throw refused();
  const now = request.server.clock();
  // A shopper's token seen lately, of a key found lately: nothing to wait for.
  const kept = keptVerdict(token, now);
  let key = kept === undefined ? undefined : auth.cached(kept.kid);
  let claims = kept?.claims;
  if (key === undefined || claims === undefined) {
    ({ claims } = await verifyCustomerToken(
      token,
      async (kid) => {
        key = await auth.key(kid, request);
        // Known before the token is judged, so that a refusal can be read by an allowed origin.
        request.storefrontKey = key ?? null;
        return key?.secret;
      },
      now,
    ));
  }
  request.storefrontKey = key!;
  const shop = key!.shop;
  const [customer] = await customerRow(request.server.db, { shopId: shop.id, remoteId: claims.remoteId });
  // A token issued before its customer was created named someone else: a customer erased since,
  // whose remote_id was then given to a new one.
  if (customer === undefined || Number(customer.created_at) > claims.issuedAt + CLOCK_SKEW_SECONDS * 1000) throw refused();
  request.shop = shop;
  request.customer = customer;
}
