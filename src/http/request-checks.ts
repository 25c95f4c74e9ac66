import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { IDEMPOTENCY_HEADER, replayKnownKey, takesIdempotencyKey } from './idempotency.js';
import { requireBody } from './json-body.js';
import { refuseBadPathIds } from './path-ids.js';
import { refuseUnknownParams } from './query.js';

/**
 * The merchant API's checks before validation, in this order: unknown query parameters, path
 * IDs, a replayed Idempotency-Key, a missing body. One callback hook rather than four async
 * ones: a read awaits none of them, and each async hook cost every request a promise and a turn
 * of the loop. Only a write that carries a key waits, for the stored outcome.
 */
export function checkRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  try {
    refuseUnknownParams(request);
    refuseBadPathIds(request);
  } catch (error) {
    return done(error as Error);
  }
  if (!takesIdempotencyKey(request.method, request.routeOptions.config) || request.headers[IDEMPOTENCY_HEADER] === undefined) return bodyCheck(request, done);
  replayKnownKey(request, reply).then(
    // A replay (or the 422 of another request's key) has answered: the request goes no further.
    (answered) => (answered === undefined ? bodyCheck(request, done) : undefined),
    (error: Error) => done(error),
  );
}

function bodyCheck(request: FastifyRequest, done: HookHandlerDoneFunction): void {
  try {
    requireBody(request);
  } catch (error) {
    return done(error as Error);
  }
  done();
}
