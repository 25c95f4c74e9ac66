import { Type, type TSchema } from 'typebox';
import { ERROR_CODES } from '../errors.js';

// Shapes shared by many routes. Every route declares its responses with these, so the
// OpenAPI document, the serialiser and the tests agree.

export const ErrorDetail = Type.Object({
  param: Type.String({ examples: ['points_events[3].points_amount'] }),
  code: Type.String({ examples: ['not_an_int32'] }),
  message: Type.String({ examples: ['points_amount must be an integer between -2147483648 and 2147483647'] }),
});

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      type: Type.Union(
        ['invalid_request_error', 'authentication_error', 'idempotency_error', 'rate_limit_error', 'api_error'].map((t) => Type.Literal(t)),
      ),
      code: Type.Union(ERROR_CODES.map((c) => Type.Literal(c))),
      message: Type.String(),
      request_id: Type.String({ examples: ['req_2Vq8dJcKx1'] }),
      details: Type.Optional(Type.Array(ErrorDetail)),
    }),
  },
  { $id: 'Error', title: 'Error' },
);

/** `{"data": T}`, the envelope of every single-record response. */
export function DataEnvelope<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema });
}

/** Errors every authenticated route may answer with. */
const COMMON_ERRORS = {
  401: 'Missing, unknown or revoked API token',
  429: 'Over the shop\'s rate limit; see Retry-After',
  500: 'A bug on our side; no internals are shown',
  503: 'Overloaded or the database is unavailable; see Retry-After',
} as const;

const WRITE_ERRORS = {
  400: 'Malformed JSON or a bad Idempotency-Key',
  409: 'A request with this Idempotency-Key is still running',
  413: 'The body is larger than the limit',
  415: 'The body is not application/json',
  422: 'Invalid fields (every failing one is listed), or an Idempotency-Key reused with another request',
} as const;

export type ErrorStatus = keyof typeof COMMON_ERRORS | keyof typeof WRITE_ERRORS | 404;

const errorRef = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: 'Error#' } } } });

/** The documented error responses of a route: the common ones plus those it names. */
export function errorResponses(kind: 'read' | 'write', extra: Partial<Record<ErrorStatus, string>> = {}): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  const all: Record<number, string | undefined> = { ...COMMON_ERRORS, ...(kind === 'write' ? WRITE_ERRORS : {}), ...extra };
  for (const [status, description] of Object.entries(all)) if (description) out[Number(status)] = errorRef(description);
  return out;
}
