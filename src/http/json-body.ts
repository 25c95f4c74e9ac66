import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received, for idempotency fingerprints. */
    rawBody?: string;
  }
}

/** JSON is the only body type accepted; anything else is 415, malformed JSON is 400. */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json$/i, { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(new AppError('invalid_json', `The request body is not valid JSON: ${(error as Error).message}`), undefined);
    }
  });
}
