import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

describe(`idempotency keys (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  const put = (remoteId: number, body: unknown, key?: string, token?: string) =>
    t.request('PUT', `${API}/customers/${remoteId}`, { body, ...(key ? { headers: { 'idempotency-key': key } } : {}), ...(token ? { token } : {}) });

  it('replays the first response byte for byte and changes nothing', async () => {
    const first = await put(1, { email: 'a@example.com', first_name: 'Ann' }, 'key-1');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    t.clock.advance(5000);
    const again = await put(1, { email: 'a@example.com', first_name: 'Ann' }, 'key-1');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    // A new request without the key does run: the customer exists now, so 200.
    const fresh = await put(1, { email: 'a@example.com', first_name: 'Ann' });
    expect(fresh.statusCode).toBe(200);
  });

  it('answers 422 idempotency_key_mismatch for the same key with another body or path', async () => {
    await put(2, { first_name: 'Bob' }, 'key-2');
    const otherBody = await put(2, { first_name: 'Robert' }, 'key-2');
    expect(otherBody.statusCode).toBe(422);
    expect(errorOf(otherBody)).toMatchObject({ code: 'idempotency_key_mismatch', type: 'idempotency_error' });
    const otherPath = await put(3, { first_name: 'Bob' }, 'key-2');
    expect(otherPath.statusCode).toBe(422);
    const customer = await t.request('GET', `${API}/customers/2`);
    expect(customer.json().data.first_name).toBe('Bob');
    expect((await t.request('GET', `${API}/customers/3`)).statusCode).toBe(404);
  });

  it('scopes keys to the shop', async () => {
    const other = await t.createShop();
    const mine = await put(4, { first_name: 'Mine' }, 'shared-key');
    const theirs = await put(4, { first_name: 'Theirs' }, 'shared-key', other.token);
    expect(mine.statusCode).toBe(201);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.json().data.first_name).toBe('Theirs');
  });

  it('does not store failed requests, so they may be retried', async () => {
    await put(5, { email: 'taken@example.com' });
    const failed = await put(6, { email: 'TAKEN@example.com' }, 'key-6');
    expect(failed.statusCode).toBe(422);
    expect(errorOf(failed).details?.[0]).toMatchObject({ param: 'email', code: 'email_taken' });
    await put(5, { email: 'moved@example.com' });
    const retried = await put(6, { email: 'TAKEN@example.com' }, 'key-6');
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
  });

  it('rejects a key longer than 255 characters', async () => {
    const res = await put(7, {}, 'k'.repeat(256));
    expect(res.statusCode).toBe(400);
    expect(errorOf(res).code).toBe('invalid_parameter');
  });

  it('forgets keys after 24 hours', async () => {
    const first = await put(8, { first_name: 'Old' }, 'key-8');
    expect(first.statusCode).toBe(201);
    t.clock.advance(DAY + 1);
    const later = await put(8, { first_name: 'New' }, 'key-8');
    expect(later.statusCode).toBe(200);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json().data.first_name).toBe('New');
  });

  it('applies 20 racing identical requests once', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, () => put(9, { first_name: 'Race' }, 'race-key')));
    const statuses = responses.map((r) => r.statusCode);
    const applied = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(applied).toHaveLength(1);
    for (const r of responses) {
      if (r.statusCode === 409) expect(errorOf(r).code).toBe('idempotency_key_in_use');
      else expect(r.body).toBe(applied[0]!.body);
    }
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
  });
});
