import type { ErrorObject } from 'ajv';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import { compileValidator, toErrorDetails } from '../core/validation.js';
import type { ErrorDetail } from '../errors.js';

// Request bodies are validated by core/validation.ts. Query strings and path parameters are
// parsed in code (http/pagination.ts, ledger/filters.ts) because the pagination modes
// (docs/pagination.md) say which parameters count; their schemas exist for the OpenAPI document.

export { ERROR_KEYWORD, compileValidator, isJsonObject, paramPath, toErrorDetails, type SchemaError } from '../core/validation.js';

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return () => true;
  return compileValidator(schema);
};

/**
 * The body's schema failures as error details, for routes that validate with
 * `attachValidation` so that their own rules can run on the fields that passed.
 */
export function attachedErrors(request: FastifyRequest): ErrorDetail[] {
  const validation = request.validationError as { validation?: ErrorObject[] } | undefined;
  return validation?.validation ? toErrorDetails(validation.validation) : [];
}
