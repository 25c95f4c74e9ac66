import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// The reference at /docs fills each request's body and headers from the document's schemas:
// a field's first example, else its default, enum or const, else a value of its type ("" for a
// string). Every body and header so made must pass the schema the server validates with, so that
// "Send" works as generated (a blank name or Idempotency-Key did not).

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const FORMATS: Record<string, string> = { 'date-time': '2026-01-15T12:00:00.000Z', date: '2026-01-15', email: 'hello@example.com', uri: 'https://example.com' };

function example(schema: Json): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  for (const key of ['example', 'default', 'const']) if (key in schema) return schema[key];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map(example));
  if (schema.anyOf ?? schema.oneOf) return example((schema.anyOf ?? schema.oneOf)[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Json>).map(([name, property]) => [name, example(property)]));
    case 'array':
      return [example(schema.items ?? {})];
    case 'string':
      return FORMATS[schema.format] ?? '';
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}

describe(`the examples /docs sends (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let doc: Json;
  beforeAll(async () => {
    t = await setup();
    doc = (await t.request('GET', '/openapi.json', { token: null })).json();
  });
  afterAll(() => t.close());

  /** The schema with every $ref to the document's components replaced by what it names. */
  const resolve = (node: unknown): any => {
    if (Array.isArray(node)) return node.map(resolve);
    if (typeof node !== 'object' || node === null) return node;
    const ref = (node as Json).$ref;
    if (typeof ref === 'string')
      return resolve(
        ref
          .split('/')
          .slice(1)
          .reduce((at: Json, key) => at[key], doc),
      );
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolve(value)]));
  };

  const operations = () =>
    Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ['put', 'post', 'patch', 'delete'].includes(method))
        .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op: resolve(op) as Json })),
    );

  it('makes a body that passes its schema for every write', () => {
    const ajv = addFormats(new Ajv({ strict: false, allowUnionTypes: true, allErrors: true }));
    const failed: string[] = [];
    let bodies = 0;
    for (const { name, op } of operations()) {
      const media = op.requestBody?.content?.['application/json'];
      if (media === undefined) continue;
      bodies++;
      const body = example(media.schema);
      const validate = ajv.compile(media.schema);
      if (!validate(body)) failed.push(`${name}: ${JSON.stringify(body)} ${ajv.errorsText(validate.errors)}`);
    }
    expect(bodies).toBeGreaterThan(15);
    expect(failed).toEqual([]);
  });

  it('makes every header it sends valid, Idempotency-Key included', () => {
    const ajv = addFormats(new Ajv({ strict: false, allowUnionTypes: true }));
    const headers = operations().flatMap(({ name, op }) =>
      ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => ({ name: `${name} ${p.name}`, p })),
    );
    expect(headers.some(({ p }) => p.name === 'Idempotency-Key')).toBe(true);
    for (const { name, p } of headers) expect(ajv.validate(p.schema, example(p.schema)), name).toBe(true);
  });
});
