import { describe, expect, it } from 'vitest';
import { createLoyaltyClient } from '../../client/src/index.js';

// The typed client sends back the newest Loyalty-Read-After it has seen (docs/scaling.md); the
// server's side, with a real standby, is test/db/replicas.test.ts. Here the transport is faked:
// answers carry tokens out of order, as several processes' answers may.

describe('the typed client and Loyalty-Read-After', () => {
  it('sends the newest token it has seen on every read, none before the first, and never on a write', async () => {
    const sent: { method: string; token: string | null }[] = [];
    const answers = ['0/1A', '0/9', '1/0', null, 'not-a-token'];
    const client = createLoyaltyClient({
      baseUrl: 'http://loyalty.test',
      token: 'lty_x',
      fetch: async (_input, init) => {
        sent.push({ method: init.method ?? 'GET', token: new Headers(init.headers).get('loyalty-read-after') });
        const token = answers.shift() ?? null;
        return new Response(JSON.stringify({ data: { id: 1 } }), {
          status: 200,
          headers: { 'content-type': 'application/json', ...(token === null ? {} : { 'loyalty-read-after': token }) },
        });
      },
    });
    await client.GET('/merchant_api/v1/shop'); // answered 0/1A
    await client.PATCH('/merchant_api/v1/shop', { body: { name: 'A' } }); // answered 0/9: older, kept 0/1A
    await client.GET('/merchant_api/v1/shop'); // answered 1/0
    await client.GET('/merchant_api/v1/shop'); // no token
    await client.GET('/merchant_api/v1/shop', { headers: { 'loyalty-read-after': '0/5' } }); // its own: kept as given
    expect(sent).toEqual([
      { method: 'GET', token: null },
      { method: 'PATCH', token: null },
      { method: 'GET', token: '0/1A' },
      { method: 'GET', token: '1/0' },
      { method: 'GET', token: '0/5' },
    ]);
  });
});
