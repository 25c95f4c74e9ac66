import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseBusyError } from '../db/connection-queue.js';
import { unavailability, type Unavailability } from '../db/unavailable.js';
import { AppError, errorStatus, errorType, type ErrorCode, type ErrorDetail } from '../errors.js';
import { toErrorDetails } from '../core/validation.js';

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

/** The 413 of a body over the limit, as Fastify's own would be answered. */
export function tooLarge(): AppError {
  return new AppError('payload_too_large', FASTIFY_MESSAGES.payload_too_large!);
}

/** The 503 of a request turned away because the process has more work than it can finish soon. */
export function overloaded(retryAfterSeconds: number): AppError {
  return new AppError('unavailable', 'The service is overloaded; retry after the time in Retry-After', {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });
}

const UNAVAILABLE_MESSAGES: Record<Unavailability, string> = {
  unreachable: 'The database is not reachable at the moment; retry (a write with the same Idempotency-Key) after the time in Retry-After',
  disk_full: "The database's disk is full; nothing was written. Reads still work; retry writes after the time in Retry-After",
};

function toAppError(error: FastifyError | AppError, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const { retryAfterSeconds } = request.server.config.loadShedding;
  if (error instanceof DatabaseBusyError) return overloaded(retryAfterSeconds);
  const down = unavailability(error);
  if (down !== null) return new AppError('unavailable', UNAVAILABLE_MESSAGES[down], { headers: { 'retry-after': String(retryAfterSeconds) } });
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

/** The connection is gone (the client went away, or timed out mid-body): nobody is left to answer. */
const connectionGone = (request: FastifyRequest): boolean => request.raw.socket?.destroyed === true;

/** Logs requests answered 503 because the database is unavailable: the first each second, with how many since. */
class OutageLog {
  #loggedAt = -Infinity;
  #since = 0;

  log(request: FastifyRequest, cause: Error): void {
    this.#since++;
    const now = performance.now();
    if (now - this.#loggedAt < 1000) return;
    request.log.warn(
      { code: 'unavailable', cause: cause.message, requests: this.#since },
      'the database is unavailable: requests answered 503 since the last report',
    );
    this.#loggedAt = now;
    this.#since = 0;
  }
}

export function registerErrorHandling(app: FastifyInstance): void {
  const outage = new OutageLog();
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    if (connectionGone(request)) {
      request.log.info({ code: error.code }, 'the connection closed before the request was answered');
      return reply.hijack();
    }
    const appError = toAppError(error, request);
    // Only bugs are errors. Overload is counted and logged by http/overload.ts, not per request;
    // an unavailable database, at most once a second, with the count of the others.
    if (appError.code === 'internal_error') request.log.error({ err: error }, 'request failed');
    else if (appError.status >= 500) {
      if (unavailability(error) !== null) outage.log(request, error as Error);
      else if (!(error instanceof DatabaseBusyError)) request.log.warn({ code: appError.code }, appError.message);
    } else request.log.info({ code: appError.code }, appError.message);
    return sendError(reply, appError);
  });

  app.setNotFoundHandler((request, reply) => sendError(reply, new AppError('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`)));
}

/** What Node's HTTP parser refused, or a request that did not arrive in time, as one of our errors. */
function clientAppError(error: NodeJS.ErrnoException & { reason?: unknown }): AppError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new AppError('request_timeout', 'The request was not received in time; the connection is closed');
  if (error.code === 'HPE_HEADER_OVERFLOW') return new AppError('headers_too_large', `The request headers are larger than the limit of ${maxHeaderSize} bytes`);
  // llhttp's reasons are fixed texts such as "Invalid header value char", never request data.
  const reason = typeof error.reason === 'string' ? ` (${error.reason})` : '';
  return new AppError('malformed_request', `The request is not valid HTTP/1.1${reason}`);
}

/**
 * Fastify's clientErrorHandler: errors Node raises on a connection before (or instead of) a
 * request reaching Fastify, such as a malformed header, a bad chunk, headers over the size limit
 * or a request that took too long to arrive. Answered in the documented shape with a request ID,
 * then the connection is closed, as Node itself does.
 */
export function clientErrorHandler(newRequestId: () => string) {
  return function handle(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const appError = clientAppError(error);
    const requestId = newRequestId();
    this.log.info({ request_id: requestId, code: error.code }, appError.message);
    // As Node does: answer only when no response has begun on this connection.
    const response = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage;
    if (socket.writable && !response?.headersSent) {
      const body = JSON.stringify(errorBody(appError.code, appError.message, requestId));
      const status = errorStatus(appError.code);
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
          `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
