import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCode } from '../errors.js';
import { AuthFailures } from '../http/auth-failures.js';
import { rateLimitHeaders } from '../http/protection.js';
import { checkRequest } from '../http/request-checks.js';
import { READ_AFTER_HEADER } from '../http/read-after.js';
import { registerReadConnection } from '../http/read-connection.js';
import { errorResponses, type ErrorDoc, type ErrorStatus } from '../http/schemas.js';
import { PUBLISHABLE_KEY_HEADER, registerStorefrontAuth } from './auth.js';
import { originAllowedByAnyKey } from './keys.js';

// The storefront scope (/storefront_api/v1): browsers' CORS, the limits per client address and
// per customer, who is asking (auth.ts), and the hooks the merchant scope also runs.

export const STOREFRONT_TAG = 'Storefront';

/** What every /me route declares: its tag and that it takes a customer token. */
export const STOREFRONT_ROUTE = { tags: [STOREFRONT_TAG], security: [{ customerToken: [] }] };

const UNAUTHORIZED: ErrorDoc = {
  name: 'CustomerUnauthorized',
  description: 'Missing, invalid, expired or revoked customer token or publishable key, or a customer who no longer exists (one message for every case)',
  codes: ['unauthorized'],
};

/** The documented errors of a storefront route, with its own codes and their 409 or 422. */
export function storefrontErrors(
  kind: 'read' | 'list' | 'write',
  codes: readonly ErrorCode[] = [],
  extra: Partial<Record<ErrorStatus, ErrorDoc>> = {},
): Record<number, unknown> {
  return errorResponses(kind, { 401: UNAUTHORIZED, ...extra }, codes);
}

const ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', READ_AFTER_HEADER, PUBLISHABLE_KEY_HEADER].join(', ');
const EXPOSED_HEADERS = ['x-request-id', 'retry-after', 'idempotent-replayed', 'etag', READ_AFTER_HEADER].join(', ');
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * A preflight carries no key, so it is allowed for an origin some live key allows; the request
 * that follows gets CORS headers only when its own key (X-Publishable-Key, or the customer
 * token's kid, even when the token is refused) allows its origin, so the browser shows a page of
 * another origin nothing.
 */
async function preflight(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const origin = request.headers.origin;
  reply.header('vary', 'Origin');
  if (typeof origin === 'string' && origin.length <= 255 && (await originAllowedByAnyKey(request.server.db, origin))) {
    reply
      .header('access-control-allow-origin', origin)
      .header('access-control-allow-methods', 'GET, POST, PUT')
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
  }
  return reply.code(204).send();
}

type RateWindow = Readonly<{ failures: number; resetAt: number }>;

const windowHeaders = (reply: FastifyReply, max: number, window: RateWindow) =>
  rateLimitHeaders(reply, max, window.failures, window.resetAt - performance.now());

function corsHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('vary', 'Origin');
  const origin = request.headers.origin;
  if (typeof origin === 'string' && request.storefrontKey?.origins.has(origin)) {
    reply.header('access-control-allow-origin', origin).header('access-control-expose-headers', EXPOSED_HEADERS);
  }
}

/** The hooks of the storefront scope; its routes are registered after this. */
export function registerStorefrontScope(app: FastifyInstance): void {
  const { customerMax, addressMax, windowMs } = app.config.storefront;
  const message = 'Too many requests; retry after the time in Retry-After';
  const perAddress = new AuthFailures(addressMax, windowMs, message);
  const perCustomer = new AuthFailures(customerMax, windowMs, message);
  app.options('/*', { schema: { hide: true } }, preflight);
  const authenticate = registerStorefrontAuth(app);
  // One hook for the limits and who is asking, in that order: a request over its address's
  // limit is refused before its credentials are looked at. Once authenticated, the answer shows
  // the count it is limited by: the customer's, or on /programme the client address's.
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS') return;
    perAddress.check(request.ip);
    const addressWindow = perAddress.record(request.ip);
    await authenticate(request);
    if (request.customer === null) {
      windowHeaders(reply, addressMax, addressWindow);
      return;
    }
    const who = `${request.shop.id}:${request.customer.remote_id}`;
    perCustomer.check(who);
    windowHeaders(reply, customerMax, perCustomer.record(who));
    request.idempotencyScope = `customer:${request.customer.remote_id}`;
  });
  // Errors too: a browser must be able to read a 401 to fetch a new token.
  // Callback-style, as it never waits: an async hook costs a promise per response.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.method !== 'OPTIONS') corsHeaders(request, reply);
    done(null, payload);
  });
  // The merchant scope's checks before validation (unknown query parameters, an idempotent
  // replay, a missing body), as one callback hook; a preflight has nothing to check.
  app.addHook('preValidation', (request, reply, done) => (request.method === 'OPTIONS' ? done() : checkRequest(request, reply, done)));
  registerReadConnection(app);
}
