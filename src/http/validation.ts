import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyRequest, FastifySchemaCompiler } from 'fastify';
import type { ErrorDetail } from '../errors.js';
import { bounded } from './body-limits.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

// Request bodies are validated strictly: no type coercion ("10" is not an integer), no
// defaults filled in, no silently dropped fields, and every failure reported.
// Query strings and path parameters are parsed in code (http/query.ts) because DESIGN.md
// rules say which parameters count; their schemas exist for the OpenAPI document.

/** A schema keyword naming the error code and message for any failure of that value. */
export const ERROR_KEYWORD = 'x-error';

export interface SchemaError {
  code: string;
  message: string;
}

const ajv = new Ajv({
  allErrors: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  verbose: true,
  strict: true,
  strictTypes: false,
  allowUnionTypes: true,
});
addFormats(ajv);
ajv.addKeyword({ keyword: ERROR_KEYWORD, schemaType: 'object' });
for (const keyword of ['example', 'x-sortable', 'x-id']) ajv.addKeyword(keyword);

const validatorCache = new WeakMap<object, ValidateFunction>();

export const validatorCompiler: FastifySchemaCompiler<any> = ({ schema, httpPart }) => {
  if (httpPart !== 'body') return () => true;
  let validate = validatorCache.get(schema);
  if (validate === undefined) {
    validate = bounded(schema, ajv.compile(schema));
    validatorCache.set(schema, validate);
  }
  return validate;
};

/** Compiles a schema for validating values outside a route body (e.g. one batch element). */
export function compileValidator(schema: object): ValidateFunction {
  return bounded(schema, ajv.compile(schema));
}

/** `/points_events/3/points_amount` → `points_events[3].points_amount`. */
export function paramPath(instancePath: string, prefix = ''): string {
  let out = prefix;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : out === '' ? part : `.${part}`;
  }
  return out;
}

function describe(error: ErrorObject, param: string): SchemaError {
  const name = param === '' ? 'the request body' : param.replace(/^.*\./, '');
  const p = error.params as Record<string, any>;
  switch (error.keyword) {
    case 'required':
      return { code: 'missing', message: `${p.missingProperty} is required` };
    case 'additionalProperties':
      return { code: 'unknown_parameter', message: `${p.additionalProperty} is not a known parameter` };
    case 'type': {
      const expected = String(p.type).replace(/,/g, ' or ');
      const article = /^[aeiou]/.test(expected) ? 'an' : 'a';
      return { code: 'invalid_type', message: `${name} must be ${article} ${expected}` };
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { code: 'out_of_range', message: `${name} must be ${p.comparison} ${p.limit}` };
    case 'minLength':
      return { code: p.limit === 1 ? 'blank' : 'too_short', message: p.limit === 1 ? `${name} must not be blank` : `${name} must be at least ${p.limit} characters` };
    case 'maxLength':
      return { code: 'too_long', message: `${name} must be at most ${p.limit} characters` };
    case 'minItems':
      return { code: 'too_few', message: `${name} must have at least ${p.limit} element${p.limit === 1 ? '' : 's'}` };
    case 'maxItems':
      return { code: 'too_many', message: `${name} must have at most ${p.limit} elements` };
    case 'enum':
      return { code: 'invalid_value', message: `${name} must be one of: ${(p.allowedValues as unknown[]).join(', ')}` };
    case 'const':
      return { code: 'invalid_value', message: `${name} must be ${JSON.stringify(p.allowedValue)}` };
    case 'format':
      return { code: 'invalid_format', message: `${name} must be a valid ${p.format}` };
    case 'pattern':
      return { code: 'invalid_format', message: `${name} has an invalid format` };
    case 'multipleOf':
      return { code: 'invalid_value', message: `${name} must be a multiple of ${p.multipleOf}` };
    case 'minProperties':
      return { code: 'missing', message: `${name} must have at least ${p.limit} field${p.limit === 1 ? '' : 's'}` };
    default:
      return { code: 'invalid_value', message: `${name} is invalid` };
  }
}

/**
 * Turns Ajv errors into error details: one per failing value (the most specific error),
 * with a param path a developer can find in the request.
 */
export function toErrorDetails(errors: readonly ErrorObject[], prefix = ''): ErrorDetail[] {
  const byParam = new Map<string, ErrorDetail>();
  for (const error of errors) {
    let param = paramPath(error.instancePath, prefix);
    if (error.keyword === 'required') {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      param = param === '' ? missing : `${param}.${missing}`;
    } else if (error.keyword === 'additionalProperties') {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      param = param === '' ? extra : `${param}.${extra}`;
    }
    // anyOf/oneOf wrap the errors of their branches, which say more; keep the first specific one.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') {
      if (!byParam.has(param)) byParam.set(param, { param, ...describe(error, param) });
      continue;
    }
    const custom = (error.parentSchema as Record<string, unknown> | undefined)?.[ERROR_KEYWORD] as SchemaError | undefined;
    const detail = { param: param === '' ? 'body' : param, ...(custom && error.keyword !== 'required' ? custom : describe(error, param)) };
    const existing = byParam.get(param);
    if (existing === undefined || existing.code === 'invalid_value') byParam.set(param, detail);
  }
  return [...byParam.values()];
}

/**
 * The body's schema failures as error details, for routes that validate with
 * `attachValidation` so that their own rules can run on the fields that passed.
 */
export function attachedErrors(request: FastifyRequest): ErrorDetail[] {
  const validation = request.validationError as { validation?: ErrorObject[] } | undefined;
  return validation?.validation ? toErrorDetails(validation.validation) : [];
}

/** A JSON object (not null, not an array): a body whose fields can be looked at one by one. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
