import { isDeepStrictEqual } from 'node:util';

// What @fastify/swagger writes, said the shortest way that means the same, before
// openapi-components.ts declares the repeated pieces once.

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Our validator's `x-error` keyword (the code and message it gives a failing field) configures
 * validation and is not part of the API; a nullable string or number reads better as
 * `type: [T, null]` than as an anyOf, and a union of single-value strings (TypeBox's Union of
 * Literals) as one `enum`.
 */
export function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) if (key !== 'x-error') out[key] = tidy(child);
  const anyOf = out.anyOf;
  // The keywords of a string or a number do not apply to null; enum and const would refuse it.
  const plain = (s: unknown) => isObject(s) && typeof s.type === 'string' && s.type !== 'object' && s.type !== 'array' && !('enum' in s) && !('const' in s);
  if (Array.isArray(anyOf) && anyOf.length === 2 && plain(anyOf[0]) && isDeepStrictEqual(anyOf[1], { type: 'null' })) {
    const { anyOf: _, ...rest } = out;
    const branch = anyOf[0] as Json;
    if (Object.keys(branch).every((key) => !(key in rest))) return { ...branch, type: [branch.type, 'null'], ...rest };
  }
  const literal = (s: unknown) => isObject(s) && s.type === 'string' && Array.isArray(s.enum) && s.enum.length === 1 && Object.keys(s).length === 2;
  if (Array.isArray(anyOf) && anyOf.length > 1 && anyOf.every(literal)) {
    const { anyOf: _, ...rest } = out;
    return { type: 'string', enum: anyOf.map((s) => (s as { enum: unknown[] }).enum[0]), ...rest };
  }
  return out;
}

/**
 * `required: false` is a parameter's default. A header's example (@fastify/swagger moves it out
 * of the schema) goes back into its schema too: /docs builds the header it sends from the schema.
 */
export const tidyParameter = (p: Json): Json => {
  const { required, ...rest } = p;
  const out = required === false ? rest : p;
  if (out.in !== 'header' || out.example === undefined || !isObject(out.schema) || 'examples' in out.schema) return out;
  return { ...out, schema: { ...out.schema, examples: [out.example] } };
};
