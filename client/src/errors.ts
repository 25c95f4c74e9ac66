import type { components } from './schema.js';

type ApiError = components['schemas']['Error']['error'];

/** A failing field of a request, as the server names it (`points_events[3].points_amount`). */
export type ErrorDetail = NonNullable<ApiError['details']>[number];

/**
 * What went wrong: one of the server's error codes; `network_error` when no response came
 * (after the retries); `unexpected_response` when one came that is not the API's error shape
 * (a proxy's error page).
 */
export type LoyaltyErrorCode = ApiError['code'] | 'network_error' | 'unexpected_response';

const isApiError = (body: unknown): body is { error: ApiError } =>
  typeof body === 'object' && body !== null && typeof (body as { error?: { code?: unknown } }).error?.code === 'string';

/** Every failed call throws this: the server's error with its status and request id, or a network failure. */
export class LoyaltyApiError extends Error {
  override readonly name = 'LoyaltyApiError';

  constructor(
    /** The HTTP status; 0 when no response came. */
    readonly status: number,
    readonly code: LoyaltyErrorCode,
    message: string,
    /** Every failing field, for `validation_failed` and `invalid_parameter`; else empty. */
    readonly details: ErrorDetail[],
    /** The server's request id (quote it when asking for help); null when no response came. */
    readonly requestId: string | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The error a non-2xx response describes (its body as parsed: JSON, or text). */
  static fromResponse(response: Response, body: unknown): LoyaltyApiError {
    const requestId = response.headers.get('x-request-id');
    if (isApiError(body)) {
      const { code, message, details, request_id } = body.error;
      return new LoyaltyApiError(response.status, code, message, details ?? [], request_id ?? requestId);
    }
    const text = typeof body === 'string' && body.length > 0 ? `: ${body.slice(0, 200)}` : '';
    return new LoyaltyApiError(response.status, 'unexpected_response', `HTTP ${response.status}${text}`, [], requestId);
  }

  /** No response came, after every retry. */
  static fromNetwork(cause: unknown): LoyaltyApiError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new LoyaltyApiError(0, 'network_error', `The request got no response: ${reason}`, [], null, { cause });
  }
}
