import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoyaltyClient, createStorefrontClient, LoyaltyApiError, type LoyaltyClient } from '../../client/src/index.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';

// The storefront client against the real server: a shopper's own account, typed, with the same
// retries and idempotency keys as the merchant client.

const STOREFRONT = '/storefront_api/v1';

describe(`the storefront client against the server (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let baseUrl: string;
  let merchant: LoyaltyClient;
  let publishableKey: string;
  let token: string;
  beforeAll(async () => {
    t = await setup();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    merchant = createLoyaltyClient({ baseUrl, token: t.token });
    await merchant.PUT(`${API}/customers/{customer_identifier}`, { params: { path: { customer_identifier: 41 } }, body: { email: 'grace@example.com' } });
    for (const points of [300, 200, 100])
      await merchant.POST(`${API}/points_events`, { body: { customer_identifier: '41', source: 'manual', points_amount: points } });
    await merchant.POST(`${API}/rewards`, { body: { name: '5 off', kind: 'free_shipping', points_price: 250 } });
    publishableKey = (await merchant.POST(`${API}/storefront_keys`, { body: { allowed_origins: [] } })).data.publishable_key;
    token = (await merchant.POST(`${API}/customers/{customer_identifier}/storefront_tokens`, { params: { path: { customer_identifier: '41' } }, body: {} }))
      .data.token;
  });
  afterAll(() => t.close());

  it('reads the public programme with the publishable key alone, and the shopper’s own account with a token', async () => {
    const anonymous = createStorefrontClient({ baseUrl, publishableKey });
    const programme = await anonymous.GET(`${STOREFRONT}/programme`);
    expect(programme.data.rewards.map((r) => r.name)).toEqual(['5 off']);
    const error = await anonymous.GET(`${STOREFRONT}/me`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LoyaltyApiError);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', requestId: expect.stringMatching(/^req_/) });

    const shopper = createStorefrontClient({ baseUrl, publishableKey, token });
    const me = await shopper.GET(`${STOREFRONT}/me`);
    expect(me.data).toMatchObject({ remote_id: 41, points_balance: 600 });
    const events = [];
    for await (const event of shopper.paginate(`${STOREFRONT}/me/points_events`, { params: { query: { 'pagination[limit]': 2 } } }))
      events.push(event.points_amount);
    expect(events).toEqual([300, 200, 100]);
  });

  it('asks a token source for a token, again once (shared by calls refused together) when the server refuses it, and fails as unauthorized when the source fails', async () => {
    const asked: (string | null)[] = [];
    const shopper = createStorefrontClient({
      baseUrl,
      publishableKey,
      token: async (refused) => {
        asked.push(refused);
        return refused === null ? 'not-a-valid-token' : token;
      },
    });
    const [me, rewards] = await Promise.all([shopper.GET(`${STOREFRONT}/me`), shopper.GET(`${STOREFRONT}/me/rewards`)]);
    expect(me.data.remote_id).toBe(41);
    expect(rewards.data.map((r) => r.name)).toEqual(['5 off']);
    expect(asked).toEqual([null, 'not-a-valid-token']);

    let calls = 0;
    const failing = createStorefrontClient({
      baseUrl,
      publishableKey,
      retry: { baseDelayMs: 1 },
      token: async () => {
        calls += 1;
        throw new Error('the merchant backend is down');
      },
    });
    const error = await failing.GET(`${STOREFRONT}/me`).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', message: 'No customer token: the merchant backend is down' });
    expect(calls).toBe(1);
    // The public programme needs no customer: the source is not asked.
    expect((await failing.GET(`${STOREFRONT}/programme`)).data.rewards.map((r) => r.name)).toEqual(['5 off']);
    expect(calls).toBe(1);
  });

  it('redeems once when the answer is lost and the client retries with the same key', async () => {
    let dropped = false;
    const sent: (string | null)[] = [];
    const shopper = createStorefrontClient({
      baseUrl,
      publishableKey,
      token,
      retry: { baseDelayMs: 1 },
      fetch: async (input: string, init: RequestInit) => {
        sent.push(new Headers(init.headers).get('idempotency-key'));
        const response = await fetch(input, init);
        if (init.method === 'POST' && !dropped) {
          dropped = true;
          throw new TypeError('fetch failed: the connection was reset');
        }
        return response;
      },
    });
    const { data: rewards } = await shopper.GET(`${STOREFRONT}/me/rewards`);
    const redeemed = await shopper.POST(`${STOREFRONT}/me/redemptions`, { body: { reward_id: rewards[0]!.id } });
    expect(redeemed.data.points_spent).toBe(250);
    const posts = sent.filter((key) => key !== null);
    expect(posts).toHaveLength(2);
    expect(posts[0]).toBe(posts[1]);
    expect((await shopper.GET(`${STOREFRONT}/me`)).data.points_balance).toBe(350);
    await expectConsistentLedger(t);
  });
});
