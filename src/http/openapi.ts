import swagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { Type } from 'typebox';
import { registerApiReference } from './api-reference.js';
import { MAX_KEY_LENGTH, takesIdempotencyKey } from './idempotency.js';
import { headerObject, useComponents, type OpenApiDocument, type SharedHeaders } from './openapi-components.js';
import type { RouteScope } from '../shops/scopes.js';
import { neededScope } from './auth.js';
import { CONTENT_DISPOSITION, ErrorResponse, errorRef, OTHER_ERRORS, pascal, RETRY_AFTER } from './schemas.js';

export const API_PREFIX = '/merchant_api/v1';
/** The shopper's side (storefront/): its own auth, and the same conventions for writes. */
export const STOREFRONT_PREFIX = '/storefront_api/v1';

/** Every tag a route may use, with its description (the OpenAPI linter rejects undefined tags). */
export const TAGS: { name: string; description: string }[] = [
  { name: 'Shop', description: 'The authenticated shop and its settings' },
  { name: 'Customers', description: 'Customers synced from the commerce platform, with their balances' },
  { name: 'Points events', description: 'The points and store-credit ledger: grants and deductions, one at a time or in batches' },
  { name: 'Orders', description: 'Orders synced from the commerce platform' },
  { name: 'Subscriptions', description: 'Subscription contracts and their billing attempts' },
  { name: 'Earning rules', description: 'How customers earn points: by orders, at signup, on birthdays, by referrals and subscriptions' },
  { name: 'Campaigns', description: 'Time-boxed multipliers and bonus points on what orders earn' },
  { name: 'Rewards', description: 'Rewards customers redeem points for' },
  { name: 'Redemptions', description: 'Customers spending points on rewards, and the codes they receive' },
  { name: 'VIP tiers', description: 'Tiers customers reach by earning points' },
  { name: 'Referrals', description: 'Customers referring customers' },
  { name: 'Webhooks', description: 'Endpoints notified of events in the shop' },
  { name: 'Connections', description: 'Shopify and WooCommerce stores that send their orders and customers here, and the deliveries they sent' },
  {
    name: 'Ingest',
    description: 'Where a connected store sends its webhooks, under /ingest/v1: signed by the platform (HMAC-SHA256 of the raw body), no API token',
  },
  { name: 'Storefront keys', description: 'Keys that let shoppers use their own account from the storefront (customer tokens, CORS)' },
  { name: 'Storefront', description: "The shopper's own account, under /storefront_api/v1, with a customer token (or a publishable key)" },
  { name: 'Reports', description: 'Reports and CSV exports' },
  { name: 'API tokens', description: "The shop's API tokens and their scopes (needs `admin`)" },
  { name: 'Audit log', description: 'Who changed what: every write of the API, the CLI and the console (needs `admin`)' },
  { name: 'Operations', description: 'Health and readiness probes' },
];

const INSUFFICIENT_SCOPE = errorRef(403, {
  name: 'InsufficientScope',
  description: "The API token lacks this operation's scope (see security); the message names it",
});

const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'put', PATCH: 'update', DELETE: 'delete' };
const SUCCESS_DESCRIPTIONS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No content' };

/** `GET /merchant_api/v1/customers/:remote_id` → `getCustomersByRemoteId`, unless the route names its own. */
export function operationId(method: string, url: string): string {
  const parts = url
    .replace(API_PREFIX, '')
    .replace(STOREFRONT_PREFIX, '/storefront')
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `By${pascal(part.slice(1))}` : pascal(part)));
  return (VERBS[method] ?? method.toLowerCase()) + parts.join('');
}

const IdempotencyHeader = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: MAX_KEY_LENGTH,
      description: 'Makes the write safe to retry: a repeat with the same key replays the first response (keys are kept 24 hours by default)',
      examples: ['order-5531-points'],
    }),
  ),
});

// Headers set on responses by the hooks every route shares, documented on each response (and
// declared once in components.headers, see HEADERS).
const REQUEST_ID_HEADER = {
  'X-Request-Id': { type: 'string', description: 'Identifies the request in our logs; quote it when asking for help', examples: ['req_2Vq8dJcKx1aQ'] },
};
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': {
    type: 'integer',
    description: 'Requests allowed per window for this shop (storefront: this customer, or this address)',
    examples: [6000],
  },
  'RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window', examples: [5999] },
  'RateLimit-Reset': { type: 'integer', description: 'Seconds until the window resets', examples: [60] },
};
const REPLAYED_HEADER = {
  'Idempotent-Replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present when this is the stored response of an earlier request with the same Idempotency-Key',
  },
};

const READ_AFTER_HEADER = {
  'Loyalty-Read-After': {
    type: 'string',
    description: 'With read replicas: send it back on reads to see this write (docs/scaling.md)',
    examples: ['0/3A0F1B8'],
  },
};

/**
 * Every response header the document names, declared once in components.headers. Their names
 * there are short: each of the ~500 places that refer to one already says the header's name.
 */
const HEADERS: SharedHeaders = Object.fromEntries(
  Object.entries({ ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS, ...REPLAYED_HEADER, ...READ_AFTER_HEADER, ...RETRY_AFTER, ...CONTENT_DISPOSITION }).map(
    ([name, header]) => [name, { component: name.replace(/^(X-|RateLimit-|Idempotent-|Loyalty-)/, '').replace('-', ''), header: headerObject(header) }],
  ),
);

function responseHeaders(url: string, replayable: boolean, status: string): Record<string, unknown> {
  // The rate limit counts a shop's requests once authenticated: a 401 has no shop to count.
  if (!(url.startsWith(API_PREFIX) || url.startsWith(STOREFRONT_PREFIX)) || status === '401') return REQUEST_ID_HEADER;
  const success = status.startsWith('2');
  return { ...REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS, ...(success && replayable ? { ...REPLAYED_HEADER, ...READ_AFTER_HEADER } : {}) };
}

/**
 * Documentation every route gets without having to say it: an operationId, a description of
 * each success response, the headers every response carries, and Idempotency-Key on writes.
 * It changes the document only, never how requests are validated or responses serialised.
 */
function documentRoute({
  schema,
  url,
  route,
}: {
  schema: FastifySchema;
  url: string;
  route: { method: string | string[]; config?: { readOnly?: boolean; optionalBody?: boolean; scope?: RouteScope } };
}) {
  const method = Array.isArray(route.method) ? route.method[0]! : route.method;
  const out: Record<string, unknown> = { ...schema };
  out.operationId ??= operationId(method, url);
  const replayable = takesIdempotencyKey(method, route.config);
  // @fastify/swagger marks every body required; useComponents drops that where a route reads none as {}.
  if (route.config?.optionalBody === true) out['x-optional-body'] = true;
  if ((url.startsWith(API_PREFIX) || url.startsWith(STOREFRONT_PREFIX)) && replayable && out.headers === undefined) out.headers = IdempotencyHeader;
  const merchant = url.startsWith(API_PREFIX);
  if (merchant) {
    // The scope the token needs, under each scheme (http/auth.ts checks it).
    const scope = neededScope(route.config);
    out.security = [{ bearerAuth: [scope] }, { tokenAuth: [scope] }];
  }
  if (out.response !== undefined) {
    const responses: Record<string, unknown> = { ...(out.response as Record<string, unknown>) };
    if (merchant && responses['403'] === undefined) responses['403'] = INSUFFICIENT_SCOPE;
    if (OTHER_ERRORS.statuses.every((status) => status in responses)) {
      for (const status of OTHER_ERRORS.statuses) delete responses[status];
      responses.default = OTHER_ERRORS.response;
    }
    for (const [status, response] of Object.entries(responses)) {
      if (typeof response !== 'object' || response === null) continue;
      const documented: Record<string, unknown> = { ...response };
      const description = SUCCESS_DESCRIPTIONS[status];
      // @fastify/swagger's key for a response's description that is not also the schema's.
      if (description && !('description' in documented)) documented['x-response-description'] = description;
      documented.headers = { ...responseHeaders(url, replayable, status), ...(documented.headers as object | undefined) };
      responses[status] = documented;
    }
    out.response = responses;
  }
  return { schema: out as FastifySchema, url };
}

/**
 * The OpenAPI 3.1 document is generated from the same route schemas that validate requests
 * and serialise responses; /docs renders it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorResponse);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Loyalty API',
        version: '1.0.0',
        description:
          'Grant and deduct loyalty points and store credit, one event at a time or in all-or-nothing batches, ' +
          'and read everything back through exact cursor or offset pagination.\n\n' +
          'Authenticate with `Authorization: Bearer <token>` (the bare token works too). ' +
          'Every write accepts an `Idempotency-Key` header: a retry with the same key replays the first response ' +
          'with `Idempotent-Replayed: true` and changes nothing. With read replicas, a write answers `Loyalty-Read-After`: ' +
          'a GET that sends it back as a header sees that write.\n\n' +
          'Every error has the same shape (the `Error` schema). Every response carries `X-Request-Id`, and every response to an ' +
          'authenticated request the `RateLimit-*` headers. Each operation lists the errors that depend on it; those any request ' +
          'may meet (the rate limit, a timeout, a failure on our side) are its `default` response.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative to where the document is served, unless PUBLIC_URL names the public address.
      servers: [{ url: app.config.publicUrl ?? '/', description: 'This server' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A shop API token (`lty_…`), created with `loyalty tokens create`' },
          tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The same token without `Bearer `' },
          customerToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description:
              "A customer token: an HS256 JWT with `kid` a publishable key, `sub` the remote_id, `iat` and `exp` (at most 24 h later), signed with the key's secret",
          },
          publishableKey: { type: 'apiKey', in: 'header', name: 'X-Publishable-Key', description: "A storefront key's publishable key (`pk_…`)" },
        },
      },
      security: [{ bearerAuth: [] }, { tokenAuth: [] }],
      tags: TAGS,
    },
    transform: documentRoute as never,
    // Repeated headers, error responses and parameters declared once in components; only the
    // tags some operation uses, so /docs shows no empty sections.
    transformObject: (documentObject) => {
      const doc = useComponents((documentObject as { openapiObject: OpenApiDocument }).openapiObject, HEADERS);
      const used = new Set(Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item).flatMap((op) => (op as { tags?: string[] }).tags ?? [])));
      return { ...doc, tags: ((doc.tags ?? []) as { name: string }[]).filter((tag) => used.has(tag.name)) } as never;
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerApiReference(app, '/openapi.json');
}
