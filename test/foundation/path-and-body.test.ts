import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// One rule for every route (docs/errors.md): a path ID that cannot name a record answers
// 400 invalid_parameter, before the body is looked at; a write that needs a body and gets none
// (or an empty one) answers 400 invalid_json. Checked on every operation of the OpenAPI document.

type Method = 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
interface Operation {
  method: Method;
  path: string;
  params: string[];
  body: boolean;
  /** The document says the body may be left out (actions whose body has no fields). */
  optional: boolean;
}

/** Path parameters that name a record (an export's `{list}` names a kind of export instead). */
const ID_PARAMS = new Set(['id', 'remote_id', 'delivery_id', 'customer_identifier']);

describe(`path IDs and missing bodies (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let operations: Operation[];
  beforeAll(async () => {
    t = await setup();
    const doc = (await t.request('GET', '/openapi.json', { token: null })).json() as {
      paths: Record<string, Record<string, { requestBody?: { required?: boolean } }>>;
    };
    // The merchant API's operations (the storefront's take a customer token; test/storefront).
    operations = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith(API))
      .flatMap(([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'put', 'post', 'patch', 'delete'].includes(method))
          .map(([method, op]) => ({
            method: method.toUpperCase() as Method,
            path,
            params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
            body: op.requestBody !== undefined,
            optional: op.requestBody !== undefined && op.requestBody.required !== true,
          })),
      );
  });
  afterAll(() => t.close());

  const fill = (path: string, value: (param: string) => string) => path.replace(/\{(\w+)\}/g, (_, param: string) => encodeURIComponent(value(param)));

  it('answers a malformed path ID 400 invalid_parameter on every route, before a bad body', async () => {
    const withParams = operations.filter((op) => op.params.length > 0 && op.params.every((p) => ID_PARAMS.has(p)));
    expect(withParams.length).toBeGreaterThan(20);
    for (const op of withParams) {
      for (const bad of ['abc', '0', '-1', '1.5', '9007199254740992']) {
        const res = await t.request(
          op.method,
          fill(op.path, () => bad),
          op.body ? { body: { no_such_field: 1 } } : {},
        );
        expect(res.statusCode, `${op.method} ${op.path} with ${bad}: ${res.body}`).toBe(400);
        const error = errorOf(res);
        expect(error.code).toBe('invalid_parameter');
        expect(error.details!.map((d) => d.param)).toEqual(op.params);
      }
    }
  });

  it('tells which path parameter is bad, and takes an e-mail as a customer_identifier except in a PUT', async () => {
    const res = await t.request('GET', `${API}/webhooks/abc/deliveries`);
    expect(errorOf(res).details).toEqual([{ param: 'id', code: 'invalid_format', message: 'id must be a positive integer below 2^53' }]);
    const get = await t.request('GET', `${API}/customers/nobody@example.com`);
    expect([get.statusCode, errorOf(get).code]).toEqual([404, 'not_found']);
    const put = await t.request('PUT', `${API}/customers/nobody@example.com`, { body: { first_name: 5 } });
    expect(put.statusCode).toBe(400);
    expect(errorOf(put).details).toEqual([
      { param: 'customer_identifier', code: 'invalid_format', message: 'customer_identifier must be a remote_id (a positive integer below 2^53) in a PUT' },
    ]);
    const neither = await t.request('GET', `${API}/customers/abc/points_events`);
    expect(errorOf(neither).details).toEqual([
      {
        param: 'customer_identifier',
        code: 'invalid_format',
        message: 'customer_identifier must be a remote_id (a positive integer below 2^53) or an e-mail address',
      },
    ]);
  });

  it('answers a well-formed ID of no record 404 once the body is valid (validation.test.ts)', async () => {
    const patched = await t.request('PATCH', `${API}/rewards/999999`, { body: { points_price: 'many' } });
    expect([patched.statusCode, errorOf(patched).code]).toEqual([422, 'validation_failed']);
    const valid = await t.request('PATCH', `${API}/rewards/999999`, { body: { points_price: 5 } });
    expect([valid.statusCode, errorOf(valid).code]).toEqual([404, 'not_found']);
  });

  it('answers a write without a body, or with an empty one, 400 invalid_json unless its body is optional', async () => {
    const writes = operations.filter((op) => op.body);
    expect(writes.length).toBeGreaterThan(15);
    for (const op of writes) {
      const path = fill(op.path, () => '999999');
      const kinds: Record<string, string>[] = [{}, { 'content-type': 'application/json' }, { 'content-type': 'application/json; charset=utf-8' }];
      for (const headers of kinds) {
        const res = await t.request(op.method, path, { headers, ...('content-type' in headers ? { body: ' ' } : {}) });
        const what = `${op.method} ${op.path} ${JSON.stringify(headers)}: ${res.body}`;
        if (op.optional) {
          expect(res.statusCode, what).toBe(404);
        } else {
          expect(res.statusCode, what).toBe(400);
          expect(errorOf(res)).toMatchObject({ code: 'invalid_json', message: 'The request body is empty; this endpoint expects a JSON object' });
        }
      }
    }
  });

  it('still judges a body that is there but not an object as a field error (422)', async () => {
    const res = await t.request('POST', `${API}/rewards`, { body: 'null', headers: { 'content-type': 'application/json' } });
    expect([res.statusCode, errorOf(res).code]).toEqual([422, 'validation_failed']);
  });
});
