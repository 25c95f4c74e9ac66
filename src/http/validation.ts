import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { compileValidator, toFieldErrors, type FieldError } from '../core/validation.js';

// Request bodies are validated by core/validation.ts. Query strings are read by their
// documented schemas in code (http/query.ts), because the pagination modes
// (docs/pagination.md) say which parameters count; path parameters are parsed by each route.

// Compiled at a route's first request, not at start-up: Ajv's compilation of every route's body
// was a tenth of the CPU a process spent starting (and `serve --workers` starts several at once).
export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return () => true;
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown) => {
    compiled ??= compileValidator(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
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
