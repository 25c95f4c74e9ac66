import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoyaltyClient, LoyaltyApiError, type LoyaltyClient } from '../../client/src/index.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// The typed client against the real server, over real HTTP, on this run's database.

/** Every request the client sends, for the assertions on how it paged or retried. */
interface Sent {
  method: string;
  url: string;
  key: string | null;
  requestId?: string | null;
}
const recording = (sent: Sent[]) => async (input: string, init: RequestInit) => {
  const entry: Sent = { method: init.method ?? 'GET', url: input, key: new Headers(init.headers).get('idempotency-key') };
  sent.push(entry);
  const response = await fetch(input, init);
  entry.requestId = response.headers.get('x-request-id');
  return response;
};

describe(`the typed client against the server (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, server): they run in order.
  let t: TestContext;
  let baseUrl: string;
  let client: LoyaltyClient;
  const sent: Sent[] = [];
  beforeAll(async () => {
    t = await setup();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    client = createLoyaltyClient({ baseUrl, token: t.token, fetch: recording(sent) });
  });
  afterAll(() => t.close());

  it('makes typed calls: upserts a customer, grants points, reads the balance back', async () => {
    const shop = await client.GET(`${API}/shop`);
    expect(shop.data.id).toBe(t.shop.id);
    const created = await client.PUT(`${API}/customers/{customer_identifier}`, {
      params: { path: { customer_identifier: 7012345678 } },
      body: { email: 'ada@example.com', first_name: 'Ada' },
    });
    expect(created.data).toMatchObject({ remote_id: 7012345678, email: 'ada@example.com', points_balance: 0 });
    const granted = await client.POST(`${API}/points_events`, { body: { customer_identifier: '7012345678', source: 'manual', points_amount: 120 } });
    expect(granted.data).toMatchObject({ points_amount: 120, source: 'manual' });
    const event = await client.GET(`${API}/points_events/{id}`, { params: { path: { id: granted.data.id } } });
    expect(event.data.id).toBe(granted.data.id);
    const customer = await client.GET(`${API}/customers/{customer_identifier}`, { params: { path: { customer_identifier: 'ada@example.com' } } });
    expect(customer.data.points_balance).toBe(120);
    // Each write had a key of its own; reads have none.
    const writes = sent.filter((s) => s.method !== 'GET');
    expect(writes.map((s) => s.key)).toEqual([expect.stringMatching(/^[0-9a-f]{32}$/), expect.stringMatching(/^[0-9a-f]{32}$/)]);
    expect(writes[0]!.key).not.toBe(writes[1]!.key);
    expect(sent.filter((s) => s.method === 'GET').every((s) => s.key === null)).toBe(true);
  });

  it('paginates over 3 pages in cursor mode and yields every record once, in order', async () => {
    for (let remoteId = 1; remoteId <= 6; remoteId++) {
      await client.PUT(`${API}/customers/{customer_identifier}`, { params: { path: { customer_identifier: remoteId } }, body: {} });
    }
    sent.length = 0;
    const seen: number[] = [];
    // Offset parameters given by mistake are not sent: cursor mode is what walks every record.
    for await (const customer of client.paginate(`${API}/customers`, { params: { query: { 'pagination[limit]': 3, 'pagination[per_page]': 2 } } }))
      seen.push(customer.remote_id);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7012345678]);
    expect(sent.map((s) => new URL(s.url).searchParams.get('pagination[since_id]'))).toEqual(['0', '3', '6']);
    expect(sent.every((s) => !new URL(s.url).searchParams.has('pagination[per_page]'))).toBe(true);
  });

  it("throws LoyaltyApiError with the server's status, code, details and request id", async () => {
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => expect.unreachable('the call succeeded'),
        (error: unknown) => error as LoyaltyApiError,
      );
    const missing = await failure(client.GET(`${API}/rewards/{id}`, { params: { path: { id: 987654 } } }));
    expect(missing).toBeInstanceOf(LoyaltyApiError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', details: [] });
    expect(missing.message).toMatch(/reward/);
    // The id the server logged the request under, as its response's header says.
    expect(missing.requestId).toMatch(/^req_/);
    expect(missing.requestId).toBe(sent.at(-1)!.requestId);

    const invalid = await failure(client.POST(`${API}/points_events`, { body: { customer_identifier: '7012345678', source: 'manual', points_amount: 1.5 } }));
    expect(invalid).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(invalid.details.map((d) => d.param)).toContain('points_amount');
    expect(invalid.requestId).toBe(sent.at(-1)!.requestId);
    expect(invalid.requestId).not.toBe(missing.requestId);

    const anonymous = createLoyaltyClient({ baseUrl, token: 'lty_unknown' });
    await expect(anonymous.GET(`${API}/shop`)).rejects.toMatchObject({ status: 401, code: 'unauthorized', requestId: expect.stringMatching(/^req_/) });
  });

  it('sends no body where the document says none is needed (a redemption used without one)', async () => {
    const reward = await client.POST(`${API}/rewards`, { body: { name: 'Five off', kind: 'fixed_amount_discount', points_price: 100, value: 5 } });
    const redemption = await client.POST(`${API}/redemptions`, { body: { customer_identifier: '7012345678', reward_id: reward.data.id } });
    const used = await client.POST(`${API}/redemptions/{id}/use`, { params: { path: { id: redemption.data.id } } });
    expect(used.data).toMatchObject({ id: redemption.data.id, status: 'used' });
  });
});
