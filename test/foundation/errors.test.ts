import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

describe(`errors and request handling (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { bodyLimitBytes: 4096 } });
  });
  afterAll(() => t.close());

  it('answers an unknown route with 404 in the error shape and a request id', async () => {
    const res = await t.request('GET', '/no/such/route');
    expect(res.statusCode).toBe(404);
    const error = errorOf(res);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });
    expect(error.request_id).toMatch(/^req_/);
    expect(res.headers['x-request-id']).toBe(error.request_id);
  });

  it('puts X-Request-Id on successful responses too', async () => {
    const res = await t.request('GET', `${API}/shop`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(errorOf(res).code).toBe('invalid_json');
  });

  it('answers a body that is not JSON with 415', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(415);
    expect(errorOf(res).code).toBe('unsupported_media_type');
  });

  it('answers a body over the limit with 413', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: JSON.stringify({ name: 'x'.repeat(5000) }), headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(413);
    expect(errorOf(res).code).toBe('payload_too_large');
  });

  it('reports every failing field, each with its param', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: { name: 5, per_event_expiry: 'yes', points_expiry_days: 0, colour: 'red' } });
    expect(res.statusCode).toBe(422);
    const error = errorOf(res);
    expect(error.code).toBe('validation_failed');
    expect(error.message).toBe('4 fields are invalid');
    const byParam = Object.fromEntries(error.details!.map((d) => [d.param, d.code]));
    expect(byParam).toEqual({ name: 'invalid_type', per_event_expiry: 'invalid_type', points_expiry_days: 'out_of_range', colour: 'unknown_parameter' });
  });

  it('does not coerce types: "10" is not an integer', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: { points_expiry_days: '10' } });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).details).toEqual([expect.objectContaining({ param: 'points_expiry_days', code: 'invalid_type' })]);
  });

  it('names details only where a field or parameter is at fault, as README and docs/errors.md say', async () => {
    const unauthorized = await t.request('GET', `${API}/shop`, { token: 'lty_unknown' });
    const missing = await t.request('GET', `${API}/rewards/999999`);
    const unsupported = await t.request('PATCH', `${API}/shop`, { body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect((await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } })).statusCode).toBe(201);
    const grant = await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1', source: 'manual', points_amount: 5 } });
    expect(grant.statusCode, grant.body).toBe(201);
    const reverse = () => t.request('POST', `${API}/points_events/${grant.json().data.id}/reverse`);
    expect((await reverse()).statusCode).toBe(201);
    const conflict = await reverse();
    for (const res of [unauthorized, missing, unsupported, conflict]) {
      expect([401, 404, 409, 415]).toContain(res.statusCode);
      expect(Object.keys(errorOf(res)).sort(), res.body).toEqual(['code', 'message', 'request_id', 'type']);
    }
    expect(errorOf(await t.request('GET', `${API}/rewards/abc`)).details).toHaveLength(1);
    expect(errorOf(await t.request('PATCH', `${API}/shop`, { body: { name: '' } })).details).toHaveLength(1);
  });

  it('rejects an empty or missing body for a write that needs one', async () => {
    const res = await t.request('PATCH', `${API}/shop`, { body: {} });
    expect(res.statusCode).toBe(422);
    const missing = await t.request('PATCH', `${API}/shop`);
    expect(missing.statusCode).toBe(400);
    expect(errorOf(missing).code).toBe('invalid_json');
  });
});

describe(`internal errors (${TEST_DIALECT})`, () => {
  it('answers 500 internal_error without the message of the thrown error', async () => {
    const t = await setup();
    try {
      // A bug surfaces as a failed query: close the database under the app.
      await t.database.close();
      const res = await t.request('GET', `${API}/shop`);
      expect(res.statusCode).toBe(500);
      const error = errorOf(res);
      expect(error.code).toBe('internal_error');
      expect(error.type).toBe('api_error');
      expect(res.body).not.toMatch(/closed|pool|database connection|stack/i);
    } finally {
      await t.app.close();
      await t.close().catch(() => {});
    }
  });
});
