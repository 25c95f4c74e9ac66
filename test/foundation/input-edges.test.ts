import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { postEvent } from '../ledger/fixtures.js';

// Input that sits at the edges of HTTP and JSON: answered in the error shape on both databases,
// never with a 500 or Fastify's own body.

describe(`input at the edges (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { points_expiry_days: 30 } });
  });
  afterAll(() => t.close());

  const putRaw = (remoteId: number, payload: string, contentType = 'application/json', key?: string) =>
    t.request('PUT', `${API}/customers/${remoteId}`, { body: payload, headers: { 'content-type': contentType, ...(key ? { 'idempotency-key': key } : {}) } });

  it('accepts JSON sent with a charset parameter', async () => {
    for (const [i, type] of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON'].entries()) {
      const res = await putRaw(100 + i, '{"first_name": "Zoë"}', type);
      expect(res.statusCode, type).toBe(201);
      expect(res.json().data.first_name).toBe('Zoë');
    }
  });

  it('refuses NUL characters and unpaired surrogates with 400 invalid_json, and keeps surrogate pairs', async () => {
    for (const payload of ['{"first_name": "a\\u0000b"}', '{"first_name": "\\ud800"}', '{"last_name": "x\\udc00y"}']) {
      const res = await putRaw(200, payload);
      expect(res.statusCode, payload).toBe(400);
      expect(errorOf(res).code).toBe('invalid_json');
    }
    expect((await t.request('GET', `${API}/customers/200`)).statusCode).toBe(404);
    const emoji = await putRaw(201, '{"first_name": "\\ud83d\\ude00 \\\\u0000"}');
    expect(emoji.statusCode).toBe(201);
    expect(emoji.json().data.first_name).toBe('😀 \\u0000');
  });

  it('answers a NUL in a path e-mail with 400, not a database error', async () => {
    const res = await t.request('GET', `${API}/customers/a%00b@example.com`);
    expect(res.statusCode).toBe(400);
    expect(errorOf(res).code).toBe('invalid_parameter');
  });

  it('answers a malformed percent-encoding with 400 in the error shape, with X-Request-Id', async () => {
    const res = await t.request('GET', `${API}/customers/%E0%A4%A`);
    expect(res.statusCode).toBe(400);
    const error = errorOf(res);
    expect(error.code).toBe('invalid_parameter');
    expect(res.headers['x-request-id']).toBe(error.request_id);
  });

  it('answers an over-long path identifier with 404 in the error shape', async () => {
    const res = await t.request('GET', `${API}/rewards/${'9'.repeat(1000)}`);
    expect(res.statusCode).toBe(404);
    expect(errorOf(res).code).toBe('not_found');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('judges a reused Idempotency-Key before validating the new body', async () => {
    const first = await putRaw(300, '{"first_name": "Key"}', 'application/json', 'reuse-1');
    expect(first.statusCode).toBe(201);
    const invalidElsewhere = await t.request('POST', `${API}/rewards`, { body: { name: 5 }, headers: { 'idempotency-key': 'reuse-1' } });
    expect(invalidElsewhere.statusCode).toBe(422);
    expect(errorOf(invalidElsewhere).code).toBe('idempotency_key_mismatch');
    const replay = await putRaw(300, '{"first_name": "Key"}', 'application/json', 'reuse-1');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
  });

  it('keeps years before 100 as written in points event times', async () => {
    await putRaw(400, '{"email": "old@example.com"}');
    const res = await postEvent(t, { customer_identifier: '400', source: 'manual', points_amount: 5, applied_at: '0050-06-01T00:00:00Z' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.applied_at).toBe('0050-06-01T00:00:00.000Z');
    expect(res.json().data.expires_at).toBe('0050-07-01T00:00:00.000Z');
  });

  it('rejects a time naming a day that does not exist', async () => {
    const res = await postEvent(t, { customer_identifier: '400', source: 'manual', points_amount: 5, applied_at: '2026-02-30T00:00:00Z' });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).details?.map((d) => d.param)).toEqual(['applied_at']);
  });
});
