import type { FastifyRequest } from 'fastify';
import type { TProperties, TSchema } from 'typebox';
import { parseTime } from '../clock.js';
import { AppError, type ErrorDetail } from '../errors.js';

// Query parameters are read by the schema that documents them (the route's `querystring`):
// its integer bounds, its allowed values and its formats decide what a parameter may hold and
// what the 400 says. They are read here rather than by the validator because the pagination
// modes (docs/pagination.md) say which parameters count: only those are read, so an ignored
// parameter is never judged.

/** The query parameters of a request, decoded, in order, repeated ones kept. */
export function queryParams(request: FastifyRequest): URLSearchParams {
  const at = request.url.indexOf('?');
  return new URLSearchParams(at < 0 ? '' : request.url.slice(at + 1));
}

type Schema = TSchema & {
  type?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  const?: string;
  enum?: string[];
  anyOf?: Schema[];
  format?: string;
};

function allowedValues(schema: Schema): string[] | undefined {
  if (schema.const !== undefined) return [schema.const];
  if (schema.enum !== undefined) return schema.enum;
  if (schema.anyOf?.every((s) => s.const !== undefined)) return schema.anyOf.map((s) => s.const!);
  return undefined;
}

/**
 * The value of one documented parameter (a number for an integer schema, else the text), or
 * undefined when it is absent. A bad value is added to `errors`, naming the parameter.
 */
export function readParam(params: URLSearchParams, name: string, property: TSchema, errors: ErrorDetail[]): number | string | undefined {
  const schema = property as Schema;
  const values = params.getAll(name);
  if (values.length === 0) return undefined;
  const text = values[0]!;
  if (values.length > 1) {
    errors.push({ param: name, code: 'repeated', message: `${name} must be given once` });
    return text;
  }
  const allowed = allowedValues(schema);
  if (schema.type === 'integer') {
    const min = schema.minimum ?? 0;
    const max = schema.maximum ?? Number.MAX_SAFE_INTEGER;
    if (!/^\d{1,16}$/.test(text) || Number(text) < min || Number(text) > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
      errors.push({ param: name, code: 'invalid_value', message: `${name} must be an integer ${range}, got ${JSON.stringify(text)}` });
    }
    return Number(text);
  }
  if (allowed !== undefined) {
    if (!allowed.includes(text))
      errors.push({ param: name, code: 'invalid_value', message: `${name} must be one of: ${allowed.join(', ')}; got ${JSON.stringify(text)}` });
    return text;
  }
  if (schema.format === 'date-time') {
    const time = parseTime(text);
    if (time === null)
      errors.push({
        param: name,
        code: 'invalid_value',
        message: `${name} must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z; got ${JSON.stringify(text)}`,
      });
    return time ?? text;
  }
  if (schema.maxLength !== undefined && text.length > schema.maxLength)
    errors.push({ param: name, code: 'too_long', message: `${name} must be at most ${schema.maxLength} characters, got ${text.length}` });
  return text;
}

/** Reads the parameters `names` of `properties` (all of them by default), in that order. */
export function readParams(
  params: URLSearchParams,
  properties: TProperties,
  errors: ErrorDetail[],
  names: readonly string[] = Object.keys(properties),
): Record<string, number | string | undefined> {
  const out: Record<string, number | string | undefined> = {};
  for (const name of names) out[name] = readParam(params, name, properties[name]!, errors);
  return out;
}

/** Throws the 400 that lists every bad parameter, when there is any. */
export function assertParams(errors: readonly ErrorDetail[]): void {
  if (errors.length === 0) return;
  throw new AppError('invalid_parameter', errors.length === 1 ? errors[0]!.message : `${errors.length} query parameters are invalid`, { details: [...errors] });
}

/**
 * Refuses query parameters a route does not document (a mistyped filter would otherwise be
 * ignored and the list would show the wrong data), as unknown body fields are refused: 400
 * with an `unknown_parameter` detail for each. Runs before authentication's lookups are used.
 */
export function refuseUnknownParams(request: FastifyRequest): void {
  const at = request.url.indexOf('?');
  if (at < 0) return;
  const documented = (request.routeOptions.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const unknown = [...new Set(new URLSearchParams(request.url.slice(at + 1)).keys())].filter((name) => !Object.hasOwn(documented, name));
  if (unknown.length === 0) return;
  const details = unknown.map((name) => ({ param: name, code: 'unknown_parameter', message: `${name} is not a known query parameter of this endpoint` }));
  throw new AppError('invalid_parameter', details.length === 1 ? details[0]!.message : `${details.length} query parameters are unknown`, { details });
}
