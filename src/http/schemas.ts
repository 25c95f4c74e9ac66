import { Type, type TSchema } from 'typebox';
import { MAX_REMOTE_ID } from '../core/ids.js';
import { ERROR_CODES, errorStatus, errorType, type ErrorCode } from '../errors.js';

// Shapes shared by many routes. Every route declares its responses with these, so the
// OpenAPI document, the serialiser and the tests agree.

export const ErrorDetail = Type.Object({
  param: Type.String({ description: 'Where in the request the problem is', examples: ['points_events[3].points_amount'] }),
  code: Type.String({ examples: ['not_an_int32'] }),
  message: Type.String({ examples: ['points_amount must be an integer between -2147483648 and 2147483647'] }),
  available_at: Type.Optional(
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'limit_reached: when the customer may do the action again; null when never (a lifetime limit)',
      examples: ['2026-03-02T18:30:00.000Z'],
    }),
  ),
});

/** One example message per code, for the documentation; a new code must come with one. */
const EXAMPLE_MESSAGES: Record<ErrorCode, string> = {
  invalid_json: 'The request body is not valid JSON',
  invalid_parameter: 'pagination[limit] must be an integer between 1 and 250',
  malformed_request: 'The request is not valid HTTP/1.1 (Invalid header value char)',
  unauthorized: 'The API token is unknown or has been revoked',
  invalid_signature: 'The signature does not match this connection: check the ingest URL and the secret the connection was given',
  insufficient_scope: 'This API token lacks the scope rewards:write that this operation needs',
  not_found: 'No customer with id "7012345678"',
  request_timeout: 'The request was not received in time; the connection is closed',
  connection_uninstalled: 'This connection was uninstalled from the store; create a new one to connect it again',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still being processed; retry later',
  payload_too_large: 'The request body is larger than the limit',
  unsupported_media_type: 'Request bodies must be JSON, sent with Content-Type: application/json',
  validation_failed: '2 points events are invalid',
  insufficient_balance: 'The customer has 120 points available; cannot take back 500',
  not_reversible: 'Points event 4812 is an expiration; expirations and reversals cannot be reversed',
  already_reversed: 'Points event 4812 was already reversed by points event 4990',
  reward_disabled: 'Reward 12 is disabled: customers cannot redeem it now',
  redemption_limit_reached: 'The customer has redeemed reward 12 2 times, its limit per customer',
  reward_out_of_codes: 'Reward 12 has no unused codes left; upload more with POST /rewards/12/codes',
  redemption_not_voidable: 'Redemption 31 was used; only an issued redemption can be voided',
  redemption_not_usable: 'Redemption 31 was voided; only an issued redemption can be marked used',
  self_referral: "The friend's e-mail is the referrer's own; a customer cannot refer themselves",
  already_customer: 'grace@example.com already has a paid order; only new customers can be referred',
  already_referred: 'grace@example.com already has a pending referral (18); a friend is referred once',
  referral_not_pending: 'Referral 18 is completed; only a pending referral can be completed or cancelled',
  birthday_already_set: 'The birthday is already set; ask the shop to change it',
  campaign_not_cancellable: 'Campaign 7 is ended; only a scheduled or active campaign can be cancelled',
  limit_reached: 'newsletter_signup may be done 1 time per day; the customer may do it again at 2026-03-02T18:30:00.000Z',
  rule_not_found: 'The shop has no enabled custom_action or visit_url rule named "newsletter_signup"',
  idempotency_key_mismatch: 'This Idempotency-Key was already used with a different request; use a new key for a new request',
  rate_limited: 'Rate limit of 6000 requests per 60 seconds exceeded; retry after the time in Retry-After',
  headers_too_large: 'The request headers are larger than the limit of 16384 bytes',
  internal_error: 'Something went wrong on our side; the request ID identifies it in our logs',
  unavailable: 'The service is overloaded; retry after the time in Retry-After',
};

function exampleError(code: ErrorCode) {
  const error: Record<string, unknown> = { type: errorType(code), code, message: EXAMPLE_MESSAGES[code], request_id: 'req_2Vq8dJcKx1mQ4n7' };
  if (code === 'limit_reached') {
    error.details = [{ param: 'name', code: 'limit_reached', message: EXAMPLE_MESSAGES[code], available_at: '2026-03-02T18:30:00.000Z' }];
  }
  if (code === 'validation_failed') {
    error.details = [
      { param: 'points_events[3].points_amount', code: 'not_an_int32', message: 'points_amount must be an integer between -2147483648 and 2147483647' },
      { param: 'points_events[7].customer_identifier', code: 'customer_not_found', message: 'No customer with e-mail "ada@example.com"' },
    ];
  }
  return { error };
}

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.Enum(['invalid_request_error', 'authentication_error', 'permission_error', 'idempotency_error', 'rate_limit_error', 'api_error'], {
        description: 'The broad class of the error',
      }),
      code: Type.Enum(ERROR_CODES, { description: 'What went wrong; a program can branch on it' }),
      message: Type.String({ description: 'For the developer reading it; may change' }),
      request_id: Type.String({ description: 'Also in the X-Request-Id header; quote it when asking for help', examples: ['req_2Vq8dJcKx1mQ4n7'] }),
      details: Type.Optional(Type.Array(ErrorDetail, { description: 'Every failing field (up to 100)', maxItems: 100 })),
    }),
  },
  { $id: 'Error', title: 'Error', description: 'The body of every non-2xx response', examples: [exampleError('validation_failed')] },
);

/** `{"data": T}`, the envelope of every single-record response. */
export function DataEnvelope<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema });
}

/**
 * A record's id in a path: documented as the positive integer it is, so that a record's `id`
 * type-checks as one in a generated client. The route receives the text and parses it (core/ids.ts):
 * text that is no id answers 400 invalid_parameter before the body is read (http/path-ids.ts).
 */
export const PathId = (description: string, example: number) =>
  Type.Unsafe<string>({ type: 'integer', minimum: 1, maximum: MAX_REMOTE_ID, title: 'Id', description, examples: [example] });

/** `VIP tier` → `VIPTier`, `points event` → `PointsEvent`: a name in the OpenAPI document. */
export const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/**
 * A documented error response: its name in the document's components.responses, what it
 * means, and (when not every code of its status applies) the codes it shows as examples.
 * Routes that share a response but word it their own way (`No such reward in this shop`) give
 * the shared component its own description (`shared`); each route keeps its wording.
 */
export interface ErrorDoc {
  name: string;
  description: string;
  shared?: string;
  codes?: readonly ErrorCode[];
}

/** Errors every authenticated route may answer with. */
const COMMON_ERRORS = {
  401: { name: 'Unauthorized', description: 'Missing, unknown or revoked API token' },
  429: { name: 'RateLimited', description: "Over the shop's rate limit; see Retry-After" },
  500: { name: 'InternalError', description: 'A bug on our side; no internals are shown' },
  503: { name: 'Unavailable', description: 'Overloaded or the database is unavailable; see Retry-After' },
} as const satisfies Record<number, ErrorDoc>;

const WRITE_ERRORS = {
  400: { name: 'BadRequest', description: 'Malformed or missing JSON, a bad path ID or Idempotency-Key' },
  409: { name: 'IdempotencyKeyInUse', description: 'A request with this Idempotency-Key is still running' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than the limit' },
  415: { name: 'UnsupportedMediaType', description: 'The body is not application/json' },
  422: { name: 'ValidationFailed', description: 'Invalid fields (every failing one is listed), or an Idempotency-Key reused with another request' },
} as const satisfies Record<number, ErrorDoc>;

const LIST_ERRORS = {
  400: {
    name: 'InvalidQueryParameter',
    description: 'A bad pagination, sort or filter parameter (each one is named in details)',
    codes: ['invalid_parameter', 'malformed_request'],
  },
} as const satisfies Record<number, ErrorDoc>;

export type ErrorStatus = keyof typeof COMMON_ERRORS | keyof typeof WRITE_ERRORS | 404;

/** The 404 of a route that names one record: `No such customer in this shop`. */
export const notFoundError = (singular: string): ErrorDoc => ({
  name: 'NotFound',
  description: `No such ${singular} in this shop`,
  shared: 'No such record in this shop; the message says which',
});

export const RETRY_AFTER = { 'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait before retrying', examples: [1] } };

/** The header of a file to save (exports). */
export const CONTENT_DISPOSITION = {
  'Content-Disposition': { type: 'string', description: 'The file name to save it as', examples: ['attachment; filename="customers.csv"'] },
};

/**
 * Codes that only some routes answer with: each route that does names them (errorResponses'
 * `codes`), so that no other route documents them.
 */
const ROUTE_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'invalid_signature',
  'connection_uninstalled',
  'insufficient_balance',
  'not_reversible',
  'already_reversed',
  'reward_disabled',
  'redemption_limit_reached',
  'reward_out_of_codes',
  'redemption_not_voidable',
  'redemption_not_usable',
  'self_referral',
  'already_customer',
  'already_referred',
  'referral_not_pending',
  'birthday_already_set',
  'limit_reached',
  'rule_not_found',
]);

/**
 * Every error response errorRef made, by `${status} ${description}`: the name and description
 * under which http/openapi-components.ts declares it once in components.responses. Filled as
 * routes are declared; the same route always gives the same entry.
 */
const RESPONSE_DOCS = new Map<string, { name: string; description: string }>();

export const errorResponseDoc = (status: number | string, description: string) => RESPONSE_DOCS.get(`${status} ${description}`);

/** A documented error response: the shared Error schema, an example of each code the status carries. */
export function errorRef(status: number | 'default', doc: ErrorDoc, routeCodes: readonly ErrorCode[] = []) {
  const key = `${status} ${doc.description}`;
  const known = RESPONSE_DOCS.get(key);
  if (known !== undefined && known.name !== doc.name)
    throw new Error(`The ${status} response "${doc.description}" is named both ${known.name} and ${doc.name}`);
  RESPONSE_DOCS.set(key, { name: doc.name, description: doc.shared ?? doc.description });
  const codes = ERROR_CODES.filter((code) =>
    doc.codes ? doc.codes.includes(code) : errorStatus(code) === status && (!ROUTE_CODES.has(code) || routeCodes.includes(code)),
  );
  const examples = Object.fromEntries(codes.map((code) => [code, { value: exampleError(code) }]));
  return {
    description: doc.description,
    ...(status === 429 || status === 503 || status === 'default' ? { headers: RETRY_AFTER } : {}),
    content: { 'application/json': { schema: { $ref: 'Error#' }, ...(codes.length > 0 ? { examples } : {}) } },
  };
}

/** The documented error responses of a route: the common ones plus those it names, with the route's own codes. */
export function errorResponses(
  kind: 'read' | 'list' | 'write',
  extra: Partial<Record<ErrorStatus, ErrorDoc>> = {},
  codes: readonly ErrorCode[] = [],
): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  const all: Record<number, ErrorDoc | undefined> = { ...COMMON_ERRORS, ...(kind === 'write' ? WRITE_ERRORS : kind === 'list' ? LIST_ERRORS : {}), ...extra };
  for (const [status, doc] of Object.entries(all)) if (doc) out[Number(status)] = errorRef(Number(status), doc, codes);
  return out;
}

/**
 * The errors any request may meet, whatever the operation: the rate limit, a request too slow
 * or with headers too large, a bug, overload. Routes declare 429, 500 and 503 (their bodies are
 * serialised by the Error schema); the document shows them, with 408 and 431, as each API
 * operation's one `default` response (http/openapi.ts), so that its own errors stand out.
 */
export const OTHER_ERRORS = {
  statuses: [429, 500, 503],
  response: errorRef('default', {
    name: 'OtherError',
    description:
      'Any other error: a bad path ID (400), over the rate limit (429; see Retry-After), a request too slow to arrive or with headers too large (408, 431), ' +
      'a bug on our side (500; no internals are shown), or overloaded or the database unavailable (503; see Retry-After)',
    codes: ['rate_limited', 'request_timeout', 'headers_too_large', 'internal_error', 'unavailable'],
  }),
} as const;
