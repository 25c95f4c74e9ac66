import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, errorType, type ErrorCode, type ErrorDetail } from '../errors.js';
import { toErrorDetails } from './validation.js';

// The one place that turns failures into HTTP responses, Fastify's own included.

export interface ErrorBody {
  error: {
    type: string;
    code: ErrorCode;
    message: string;
    request_id: string;
    details?: ErrorDetail[];
  };
}

export function errorBody(code: ErrorCode, message: string, requestId: string, details?: ErrorDetail[]): ErrorBody {
  const error: ErrorBody['error'] = { type: errorType(code), code, message, request_id: requestId };
  if (details !== undefined && details.length > 0) error.details = details;
  return { error };
}

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_RATE_LIMIT_EXCEEDED: 'rate_limited',
};

const FASTIFY_MESSAGES: Partial<Record<ErrorCode, string>> = {
  unsupported_media_type: 'Request bodies must be JSON, sent with Content-Type: application/json',
  payload_too_large: 'The request body is larger than the limit',
  invalid_json: 'The request body is not valid JSON',
};

function toAppError(error: FastifyError | AppError): AppError {
  if (error instanceof AppError) return error;
  if (error.validation) {
    const details = toErrorDetails(error.validation as any);
    const message = details.length === 1 ? details[0]!.message : `${details.length} fields are invalid`;
    return new AppError('validation_failed', message, { details });
  }
  const code = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (code === 'rate_limited') return new AppError('rate_limited', 'Too many requests; retry after the time in Retry-After');
  if (code !== undefined) return new AppError(code, FASTIFY_MESSAGES[code] ?? error.message);
  if (error.statusCode === 503) return new AppError('unavailable', 'The service is overloaded; retry after the time in Retry-After');
  return new AppError('internal_error', 'Something went wrong on our side; the request ID identifies it in our logs');
}

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(errorBody(error.code, error.message, reply.request.id, error.details)));
}

/**
 * Errors Fastify's router raises before any hook runs (a malformed percent-encoding, a path
 * segment over the length limit): answered in the same shape, with X-Request-Id.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('x-request-id', request.id);
  const appError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('not_found', 'No record has an identifier that long')
      : new AppError('invalid_parameter', 'The URL is not valid: check its percent-encoding');
  return sendError(reply, appError);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error);
    if (appError.status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: appError.code }, appError.message);
    return sendError(reply, appError);
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, new AppError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`)),
  );
}
