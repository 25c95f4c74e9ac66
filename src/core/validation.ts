import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../errors.js';
import { bounded } from './body-limits.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

// JSON Schema validation for request bodies and for values validated outside a route (an
// imported row): strict, no type coercion ("10" is not an integer), no defaults filled in, no
// silently dropped fields, and every failure reported. Domain code and the CLI use it as the
// routes do (http/validation.ts plugs it into Fastify).

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

/** Compiles a schema once (a route's body, or values validated outside a route such as an imported row). */
export function compileValidator(schema: object): ValidateFunction {
  let validate = validatorCache.get(schema);
  if (validate === undefined) {
    // Bounded: Ajv's work and the errors it builds follow the schema's limits, not the body's size.
    validate = bounded(schema, ajv.compile(schema));
    validatorCache.set(schema, validate);
  }
  return validate;
}

/**
 * A failing value, located by structure (which element of the body's list, which field) until
 * it is shown as a param: rules read `index` and `field`, never a formatted path.
 */
export interface FieldError {
  /** The element of the body's list it is in (a batch's `points_events[3]`), when it is in one. */
  index?: number;
  /** The field of the element, or of the body; '' for the element or the body itself. */
  field: string;
  /** Where below the field, as shown (`[2]` of `tags[2]`); '' when it is the field itself. */
  below?: string;
  code: string;
  message: string;
}

/** Path segments as a param: `['points_events', 3, 'points_amount']` → `points_events[3].points_amount`. */
function pathText(segments: readonly (string | number)[]): string {
  let out = '';
  for (const part of segments) out += typeof part === 'number' ? `[${part}]` : out === '' ? part : `.${part}`;
  return out;
}

/** `/points_events/3/points_amount` → `points_events[3].points_amount`. */
export function paramPath(instancePath: string): string {
  return pathText(segmentsOf(instancePath));
}

function segmentsOf(instancePath: string): (string | number)[] {
  return instancePath
    .split('/')
    .slice(1)
    .map((raw) => {
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^\d+$/.test(part) ? Number(part) : part;
    });
}

/** The error as shown in a response: its param is the path into the request. */
export function showError(error: FieldError, list?: string): ErrorDetail {
  const within = error.index === undefined ? [] : [list ?? '', error.index];
  const param = pathText([...within, ...(error.field === '' ? [] : [error.field])]) + (error.below ?? '');
  return { param: param === '' ? 'body' : param, code: error.code, message: error.message };
}

/** A field's error with no element: the param is the field's name. */
export const fieldError = (field: string, code: string, message: string): FieldError => ({ field, code, message });

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
      return {
        code: p.limit === 1 ? 'blank' : 'too_short',
        message: p.limit === 1 ? `${name} must not be blank` : `${name} must be at least ${p.limit} characters`,
      };
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
 * Turns Ajv errors into field errors: one per failing value (the most specific error). With
 * `list`, a value inside an element of that list of the body (`/points_events/3/…`) is told
 * by the element's index.
 */
export function toFieldErrors(errors: readonly ErrorObject[], list?: string): FieldError[] {
  const byParam = new Map<string, FieldError>();
  for (const error of errors) {
    const segments = segmentsOf(error.instancePath);
    if (error.keyword === 'required') segments.push((error.params as { missingProperty: string }).missingProperty);
    else if (error.keyword === 'additionalProperties') segments.push((error.params as { additionalProperty: string }).additionalProperty);
    const param = pathText(segments);
    const inElement = list !== undefined && segments[0] === list && typeof segments[1] === 'number';
    const local = inElement ? segments.slice(2) : segments;
    const field = typeof local[0] === 'string' ? local[0] : '';
    const rest = local.slice(field === '' ? 0 : 1);
    const below = rest.length === 0 ? '' : `${typeof rest[0] === 'string' ? '.' : ''}${pathText(rest)}`;
    const where = { ...(inElement ? { index: segments[1] as number } : {}), field, ...(below === '' ? {} : { below }) };
    // anyOf/oneOf wrap the errors of their branches, which say more; keep the first specific one.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') {
      if (!byParam.has(param)) byParam.set(param, { ...where, ...describe(error, param) });
      continue;
    }
    const custom = (error.parentSchema as Record<string, unknown> | undefined)?.[ERROR_KEYWORD] as SchemaError | undefined;
    const located = { ...where, ...(custom && error.keyword !== 'required' ? custom : describe(error, param)) };
    const existing = byParam.get(param);
    if (existing === undefined || existing.code === 'invalid_value') byParam.set(param, located);
  }
  return [...byParam.values()];
}

/** Ajv errors as error details, each param the path into the request. */
export function toErrorDetails(errors: readonly ErrorObject[]): ErrorDetail[] {
  return toFieldErrors(errors).map((e) => showError(e));
}

/** A JSON object (not null, not an array): a body whose fields can be looked at one by one. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A schema without its description: an update body's copy of a field that its resource's
 * schema describes (the OpenAPI document says it once). Call it before Type.Optional, which
 * marks the schema it is given.
 */
export function undescribed<T extends object>(schema: T): T {
  const { description: _description, ...rest } = schema as T & { description?: string };
  return rest as T;
}
