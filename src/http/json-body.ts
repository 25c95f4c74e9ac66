import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received, for idempotency fingerprints. */
    rawBody?: string;
  }
  interface FastifyContextConfig {
    /** The route's body has no fields to require (an action): one left out reads as {}. */
    optionalBody?: boolean;
  }
}

// application/json and +json types, with or without parameters such as charset=utf-8.
const JSON_TYPE = /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i;

// A \u0000 escape, or a \uD800–\uDFFF escape that is not half of a surrogate pair, preceded by
// an even number of backslashes (so it is an escape, not an escaped backslash). Neither can be
// stored as text by PostgreSQL, and SQLite would store something else than was sent, so both
// databases refuse them the same way: here, before any field is read.
const UNSTORABLE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2}\\u)d[c-f][0-9a-f]{2})/i;

/** JSON is the only body type accepted; anything else is 415, malformed JSON is 400. */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return done(new AppError('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
    if (text.includes('\\u') && UNSTORABLE.test(text)) {
      return done(
        new AppError('invalid_json', 'The request body contains a \\u0000 character or an unpaired UTF-16 surrogate, which cannot be stored'),
        undefined,
      );
    }
    done(null, value);
  });
}

/**
 * A preValidation hook, after the path's checks: a route that takes a body answers a request
 * without one (no body, or an empty one) 400 invalid_json, as a malformed one, unless the body
 * is optional; then none reads as {}.
 */
export function requireBody(request: FastifyRequest): void {
  if (request.routeOptions.schema?.body === undefined) return;
  if (request.routeOptions.config.optionalBody) {
    if (request.body === undefined || request.body === null) request.body = {};
    return;
  }
  if (request.body !== undefined) return;
  throw new AppError('invalid_json', 'The request body is empty; this endpoint expects a JSON object');
}
