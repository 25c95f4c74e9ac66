import type { FastifyRequest } from 'fastify';
import { parseCustomerIdentifier, parseRemoteId } from '../core/ids.js';
import { AppError, type ErrorDetail } from '../errors.js';

// One rule for every path: an ID that cannot name a record is 400 invalid_parameter, before
// the body is read (docs/errors.md), whatever the route and whatever the body holds. An ID
// that is well formed but names no record of the shop is 404, as before.

/** Path parameters that hold a record's ID (or remote_id): positive integers below 2^53. */
const ID_PARAMS: ReadonlySet<string> = new Set(['id', 'remote_id', 'delivery_id']);
const CUSTOMER_IDENTIFIER = 'customer_identifier';

function badParam(name: string, text: string, method: string): ErrorDetail | null {
  if (ID_PARAMS.has(name)) {
    return parseRemoteId(text) === null ? { param: name, code: 'invalid_format', message: `${name} must be a positive integer below 2^53` } : null;
  }
  if (name !== CUSTOMER_IDENTIFIER) return null;
  // A PUT creates the customer under the remote_id it names, so it takes no e-mail.
  if (method === 'PUT') {
    return parseRemoteId(text) === null
      ? { param: name, code: 'invalid_format', message: `${name} must be a remote_id (a positive integer below 2^53) in a PUT` }
      : null;
  }
  return parseCustomerIdentifier(text) === null
    ? { param: name, code: 'invalid_format', message: `${name} must be a remote_id (a positive integer below 2^53) or an e-mail address` }
    : null;
}

/** Refuses the request when a path ID is malformed (a preValidation check: http/request-checks.ts). */
export function refuseBadPathIds(request: FastifyRequest): void {
  const params = (request.params ?? {}) as Record<string, string>;
  const details: ErrorDetail[] = [];
  for (const [name, text] of Object.entries(params)) {
    const bad = badParam(name, text, request.method);
    if (bad !== null) details.push(bad);
  }
  if (details.length === 0) return;
  throw new AppError('invalid_parameter', details.length === 1 ? details[0]!.message : `${details.length} path parameters are invalid`, { details });
}
