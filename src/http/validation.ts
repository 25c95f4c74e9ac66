import type { ErrorObject } from 'ajv';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { compileValidator, toFieldErrors, type FieldError } from '../core/validation.js';

// Request bodies are validated by core/validation.ts. Query strings are read by their
// documented schemas in code (http/query.ts), because the pagination modes
// (docs/pagination.md) say which parameters count; path parameters are parsed by each route.

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return () => true;
  return compileValidator(schema);
};

/**
 * The body's schema failures, for routes that validate with `attachValidation` so that their
 * own rules can run on the fields that passed. `list` names the body's list whose elements
 * are judged one by one (a batch's `points_events`).
 */
export function attachedErrors(request: FastifyRequest, list?: string): FieldError[] {
  const validation = request.validationError as { validation?: ErrorObject[] } | undefined;
  return validation?.validation ? toFieldErrors(validation.validation, list) : [];
}
