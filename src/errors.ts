// The closed set of error codes, the one table that maps them to HTTP, and AppError.
// Domain code throws AppError; only the error handler (http/error-handler.ts) knows statuses.

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'idempotency_error' | 'rate_limit_error' | 'api_error';

const ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_parameter: { status: 400, type: 'invalid_request_error' },
  malformed_request: { status: 400, type: 'invalid_request_error' },
  unauthorized: { status: 401, type: 'authentication_error' },
  invalid_signature: { status: 401, type: 'authentication_error' },
  insufficient_scope: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'invalid_request_error' },
  request_timeout: { status: 408, type: 'invalid_request_error' },
  connection_uninstalled: { status: 410, type: 'invalid_request_error' },
  idempotency_key_in_use: { status: 409, type: 'idempotency_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  validation_failed: { status: 422, type: 'invalid_request_error' },
  insufficient_balance: { status: 422, type: 'invalid_request_error' },
  not_reversible: { status: 422, type: 'invalid_request_error' },
  already_reversed: { status: 409, type: 'invalid_request_error' },
  reward_disabled: { status: 422, type: 'invalid_request_error' },
  redemption_limit_reached: { status: 422, type: 'invalid_request_error' },
  reward_out_of_codes: { status: 422, type: 'invalid_request_error' },
  redemption_not_voidable: { status: 409, type: 'invalid_request_error' },
  redemption_not_usable: { status: 409, type: 'invalid_request_error' },
  self_referral: { status: 422, type: 'invalid_request_error' },
  already_customer: { status: 422, type: 'invalid_request_error' },
  already_referred: { status: 422, type: 'invalid_request_error' },
  referral_not_pending: { status: 409, type: 'invalid_request_error' },
  birthday_already_set: { status: 409, type: 'invalid_request_error' },
  campaign_not_cancellable: { status: 409, type: 'invalid_request_error' },
  limit_reached: { status: 422, type: 'invalid_request_error' },
  rule_not_found: { status: 422, type: 'invalid_request_error' },
  idempotency_key_mismatch: { status: 422, type: 'idempotency_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  internal_error: { status: 500, type: 'api_error' },
  unavailable: { status: 503, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ErrorCode = keyof typeof ERRORS;

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export function errorStatus(code: ErrorCode): number {
  return ERRORS[code].status;
}

export function errorType(code: ErrorCode): ErrorType {
  return ERRORS[code].type;
}

/** One failing field. `param` is a path into the request, e.g. `points_events[3].points_amount`. */
export interface ErrorDetail {
  param: string;
  code: string;
  message: string;
  /** limit_reached: when the customer may do the action again (ISO 8601), or null when never. */
  available_at?: string | null;
}

/** Validation reports every failing field, up to this many. */
export const MAX_ERROR_DETAILS = 100;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, options: { details?: ErrorDetail[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = options.details?.slice(0, MAX_ERROR_DETAILS);
    this.headers = options.headers;
  }

  get status(): number {
    return errorStatus(this.code);
  }
}

/** A 422 listing failing fields; the message counts them. */
export function validationError(details: ErrorDetail[], noun = 'field'): AppError {
  const n = details.length;
  const message = n === 1 ? details[0]!.message : `${n} ${noun}s are invalid`;
  return new AppError('validation_failed', message, { details });
}

export function notFound(what: string, id: string | number): AppError {
  return new AppError('not_found', `No ${what} with id ${JSON.stringify(String(id))}`);
}
