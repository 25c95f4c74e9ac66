import type { ErrorObject, ValidateFunction } from 'ajv';
import { MAX_ERROR_DETAILS } from '../errors.js';

// Ajv with allErrors reports every failure, so both its work and the error objects it builds
// grow with the input: each of 690,000 elements beyond a batch's maxItems, or of 200,000 unknown
// fields, becomes an error. Before Ajv looks at a value, the value is cut down to what can fail
// within bounds: an array to maxItems + 1 elements, an object to its first MAX_ERROR_DETAILS + 1
// unknown fields. What is cut away could only add failures of a kind already reported, so the
// verdict and the reported fields stay the same, and Ajv's work is bounded by the schema's limits
// (a batch: maxItems elements of one schema each), not by the size of the body.

interface Schema {
  properties?: Record<string, Schema>;
  additionalProperties?: unknown;
  items?: unknown;
  maxItems?: number;
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

function trimArray(schema: Schema, value: unknown[]): unknown[] {
  let out = typeof schema.maxItems === 'number' && value.length > schema.maxItems + 1 ? value.slice(0, schema.maxItems + 1) : value;
  if (!isSchema(schema.items)) return out;
  for (let i = 0; i < out.length; i++) {
    const trimmed = trim(schema.items, out[i]);
    if (trimmed === out[i]) continue;
    if (out === value) out = value.slice();
    out[i] = trimmed;
  }
  return out;
}

function trimObject(schema: Schema & { properties: Record<string, Schema> }, value: Record<string, unknown>): Record<string, unknown> {
  const { properties } = schema;
  let children: Map<string, unknown> | undefined;
  for (const key in properties) {
    if (!Object.hasOwn(value, key)) continue;
    const trimmed = trim(properties[key]!, value[key]);
    if (trimmed !== value[key]) (children ??= new Map()).set(key, trimmed);
  }
  // Counting stops past the limit: a body of 200,000 unknown fields costs no more than 102.
  let unknown = 0;
  if (schema.additionalProperties === false) {
    for (const key in value) if (!Object.hasOwn(properties, key) && ++unknown > MAX_ERROR_DETAILS + 1) break;
  }
  const cutUnknown = unknown > MAX_ERROR_DETAILS + 1;
  if (!cutUnknown && children === undefined) return value;
  // No prototype: a field named __proto__ stays a field.
  const out: Record<string, unknown> = Object.create(null);
  for (const key in properties) if (Object.hasOwn(value, key)) out[key] = children?.has(key) ? children.get(key) : value[key];
  let kept = 0;
  for (const key in value) {
    if (Object.hasOwn(properties, key)) continue;
    if (cutUnknown && ++kept > MAX_ERROR_DETAILS + 1) break;
    out[key] = value[key];
  }
  return out;
}

/** The value, or a shallow copy of it cut down to the schema's limits (see above). */
export function trim(schema: Schema, value: unknown): unknown {
  if (Array.isArray(value)) return trimArray(schema, value);
  if (typeof value === 'object' && value !== null && isSchema(schema.properties)) {
    return trimObject(schema as Schema & { properties: Record<string, Schema> }, value as Record<string, unknown>);
  }
  return value;
}

/**
 * An Ajv validator that looks only at the part of a value its schema's limits allow (see
 * above). Valid values are never cut, so they pass exactly as before.
 */
export function bounded(schema: object, validate: ValidateFunction): ValidateFunction {
  const check = (data: unknown) => {
    const ok = validate(trim(schema as Schema, data)) as boolean;
    check.errors = validate.errors as ErrorObject[] | null | undefined;
    return ok;
  };
  check.errors = null as ErrorObject[] | null | undefined;
  // Fastify and the record routes read only `errors`, after a failure.
  return Object.assign(check, { schema: validate.schema }) as unknown as ValidateFunction;
}
