import { generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers } from '../ledger/fixtures.js';
import { asCustomer, createKey, customerToken, type TestKey } from './fixtures.js';

// docs/storefront.md, customer tokens: every refusal is the same 401, whatever check failed.
// The `it` blocks share one shop and one clock, in order.

describe(`customer tokens (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let key: TestKey;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 3);
    key = await createKey(t);
    // Tokens issued an hour ago are issued after the customers were created.
    t.clock.advance(2 * 3600_000);
  });
  afterAll(() => t.close());

  const me = (token: string | null) => asCustomer(t, 'GET', '/me', token);
  /** The error body without its request id: the same for every refusal. */
  const refusal = async (token: string | null) => {
    const res = await me(token);
    expect(res.statusCode, res.body).toBe(401);
    const { request_id, ...rest } = res.json().error;
    expect(request_id).toBe(res.headers['x-request-id']);
    return rest;
  };
  let expected: unknown;

  it('accepts a token the merchant signed, with 60 s of clock skew either way', async () => {
    for (const token of [
      await customerToken(t, key),
      await customerToken(t, key, { iat: 50, exp: 3600 }),
      await customerToken(t, key, { iat: -3600, exp: -50 }),
    ]) {
      const res = await me(token);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ remote_id: 1, email: 'customer1@example.com' });
    }
    expected = await refusal(null);
    expect(expected).toEqual({ type: 'authentication_error', code: 'unauthorized', message: expect.any(String) });
  });

  it('refuses every malformed or unsigned token with the same 401', async () => {
    const unsigned = new UnsecuredJWT({ sub: '1', iat: Math.floor(t.clock.now / 1000), exp: Math.floor(t.clock.now / 1000) + 60 }).encode();
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT', kid: key.publishable_key })).toString('base64url');
    for (const token of ['', 'garbage', 'a.b.c', unsigned, `${header}.${unsigned.split('.')[1]}.`, `lty_${'x'.repeat(43)}`, t.token]) {
      expect(await refusal(token), token).toEqual(expected);
    }
  });

  it("refuses any alg but HS256, even signed with the key's secret", async () => {
    expect(await refusal(await customerToken(t, key, { alg: 'HS512' }))).toEqual(expected);
    expect(await refusal(await customerToken(t, key, { alg: 'HS384' }))).toEqual(expected);
    const { privateKey } = await generateKeyPair('RS256');
    const rs = await new SignJWT({ sub: '1' })
      .setProtectedHeader({ alg: 'RS256', kid: key.publishable_key })
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    expect(await refusal(rs)).toEqual(expected);
  });

  it('refuses a bad signature, an unknown kid and a missing kid', async () => {
    expect(await refusal(await customerToken(t, key, { secret: `${key.secret}x` }))).toEqual(expected);
    expect(await refusal(await customerToken(t, key, { kid: 'pk_unknown' }))).toEqual(expected);
    const other = await createKey(t);
    expect(await refusal(await customerToken(t, key, { kid: other.publishable_key }))).toEqual(expected);
    const good = await customerToken(t, key);
    const [h, p, s] = good.split('.');
    expect(await refusal(`${h}.${p}.${s!.slice(0, -2)}AA`)).toEqual(expected);
  });

  it('refuses exp missing or past, nbf in the future, iat missing or in the future, a lifetime over 24 h', async () => {
    for (const options of [
      { exp: null },
      { exp: -61 },
      { iat: -7200, exp: -3600 },
      { nbf: 61 },
      { iat: null },
      { iat: 120, exp: 3600 },
      { exp: 24 * 3600 + 1 },
      { iat: -10, exp: 24 * 3600 },
    ]) {
      expect(await refusal(await customerToken(t, key, options)), JSON.stringify(options)).toEqual(expected);
    }
    // Exactly 24 hours, and nbf within the skew, are accepted.
    expect((await me(await customerToken(t, key, { exp: 24 * 3600 }))).statusCode).toBe(200);
    expect((await me(await customerToken(t, key, { nbf: 59 }))).statusCode).toBe(200);
  });

  it('judges a token that passed again at each use: refused before its nbf and from its exp on, with the skew', async () => {
    const token = await customerToken(t, key, { nbf: 100, exp: 200 });
    expect(await refusal(token)).toEqual(expected);
    t.clock.advance(41_000);
    expect((await me(token)).statusCode).toBe(200);
    t.clock.advance(218_000);
    expect((await me(token)).statusCode).toBe(200);
    t.clock.advance(1000);
    expect(await refusal(token)).toEqual(expected);
  });

  it("refuses a sub that names no customer of the key's shop, or not as a remote_id", async () => {
    for (const sub of ['999', '0', '-1', '01', 'customer1@example.com', '1.0', '99999999999999999999']) {
      expect(await refusal(await customerToken(t, key, { sub })), sub).toEqual(expected);
    }
    const b = await t.createShop({ name: 'B' });
    const keyB = await createKey(t, [], b.token);
    // Customer 2 exists in shop A only.
    expect(await refusal(await customerToken(t, keyB, { sub: '2' }))).toEqual(expected);
  });

  it('refuses a customer erased since, even when the remote_id is given to a new customer', async () => {
    const token = await customerToken(t, key, { sub: '3' });
    expect((await me(token)).statusCode).toBe(200);
    expect((await t.request('DELETE', `${API}/customers/3`)).statusCode).toBe(200);
    expect(await refusal(token)).toEqual(expected);
    t.clock.advance(120_000);
    expect((await t.request('PUT', `${API}/customers/3`, { body: { email: 'new3@example.com' } })).statusCode).toBe(201);
    expect(await refusal(token)).toEqual(expected);
    expect((await me(await customerToken(t, key, { sub: '3' }))).json().data.email).toBe('new3@example.com');
  });

  it("refuses tokens of a revoked key from then on; the shop's other keys still work", async () => {
    const spare = await createKey(t);
    const token = await customerToken(t, key);
    expect((await me(token)).statusCode).toBe(200);
    expect((await t.request('DELETE', `${API}/storefront_keys/${key.id}`)).statusCode).toBe(200);
    expect(await refusal(token)).toEqual(expected);
    expect((await me(await customerToken(t, spare))).statusCode).toBe(200);
  });
});
