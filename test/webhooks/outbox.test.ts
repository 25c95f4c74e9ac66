import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../../src/db/dialect.js';
import { importRecords, readNdjson } from '../../src/records/import.js';
import { customers } from '../../src/records/resources/customers.js';
import { enqueueEvents as enqueueWebhookEvents } from '../../src/events/outbox.js';
import { API, DAY, setup, type TestContext, type TestShop } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, createWebhook, grant, runJob, storedDeliveries } from './fixtures.js';

// The outbox: deliveries are written in the transaction of the change they announce, one per
// event per webhook subscribed to its topic, and nothing when the change does not commit.

describe(`webhook outbox (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  /** A shop of its own per test, with customers 1 to 3. */
  async function shop(settings = {}): Promise<TestShop> {
    const s = await t.createShop(settings);
    await createCustomers(t, [1, 2, 3], s.token);
    return s;
  }

  it('writes nothing for a shop without a webhook for the topic', async () => {
    const s = await shop();
    await createWebhook(t, 'customer.created', undefined, s.token);
    const res = await t.request('POST', `${API}/points_events/batch`, { token: s.token, body: { points_events: [grant(1, 10), grant(2, 20)] } });
    expect(res.statusCode).toBe(201);
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);
  });

  it('enqueues one delivery per event per matching webhook, with the events as the API answered them', async () => {
    const s = await shop();
    const a = await createWebhook(t, 'points_event.created', 'https://a.example.com/h', s.token);
    const b = await createWebhook(t, 'points_event.created', 'https://b.example.com/h', s.token);
    await createWebhook(t, 'customer.updated', undefined, s.token);
    const res = await t.request('POST', `${API}/points_events/batch`, { token: s.token, body: { points_events: [grant(1, 10), grant(2, 20), grant(1, -5)] } });
    expect(res.statusCode).toBe(201);
    const events = res.json().data;

    const rows = await storedDeliveries(t, s.shop.id);
    expect(rows).toHaveLength(6);
    for (const hook of [a, b]) {
      const mine = rows.filter((r) => r.webhook_id === hook.id);
      // In the order the events happened, each with the record exactly as the response showed it.
      expect(mine.map((r) => r.body.data)).toEqual(events);
      expect(mine.every((r) => r.topic === 'points_event.created' && r.status === 'pending' && r.next_attempt_at === t.clock.now)).toBe(true);
      expect(mine.map((r) => r.body)).toEqual(
        events.map(() =>
          expect.objectContaining({
            id: expect.stringMatching(/^evt_[\w-]+$/),
            topic: 'points_event.created',
            shop_id: s.shop.id,
            created_at: new Date(t.clock.now).toISOString(),
          }),
        ),
      );
    }
    // One event id per event, shared by its deliveries to both webhooks.
    const eventIds = rows.map((r) => r.event_id);
    expect(new Set(eventIds).size).toBe(3);
    expect(rows.filter((r) => r.webhook_id === a.id).map((r) => r.event_id)).toEqual(rows.filter((r) => r.webhook_id === b.id).map((r) => r.event_id));
  });

  it('enqueues nothing for a batch that fails, and nothing again for an idempotent replay', async () => {
    const s = await shop();
    await createWebhook(t, 'points_event.created', undefined, s.token);
    const failed = await t.request('POST', `${API}/points_events/batch`, { token: s.token, body: { points_events: [grant(1, 10), grant(2, -50)] } });
    expect(failed.statusCode).toBe(422);
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);

    const headers = { 'idempotency-key': 'once' };
    expect((await t.request('POST', `${API}/points_events`, { token: s.token, headers, body: grant(1, 10) })).statusCode).toBe(201);
    const replay = await t.request('POST', `${API}/points_events`, { token: s.token, headers, body: grant(1, 10) });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await storedDeliveries(t, s.shop.id)).toHaveLength(1);
  });

  it('rolls back with the transaction that enqueued', async () => {
    const s = await shop();
    await createWebhook(t, 'customer.updated', undefined, s.token);
    const enqueued = transaction(t.database.db, async (trx) => {
      expect(await enqueueWebhookEvents(trx, s.shop.id, 'customer.updated', [{ remote_id: 1 }, { remote_id: 2 }], t.clock.now)).toBe(2);
      throw new Error('the change fails after enqueueing');
    });
    await expect(enqueued).rejects.toThrow('the change fails');
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);
    await transaction(t.database.db, (trx) => enqueueWebhookEvents(trx, s.shop.id, 'customer.updated', [{ remote_id: 1 }], t.clock.now));
    expect(await storedDeliveries(t, s.shop.id)).toHaveLength(1);
  });

  it('announces customers created and updated by PUT and by import', async () => {
    const s = await t.createShop();
    await createWebhook(t, 'customer.created', undefined, s.token);
    await createWebhook(t, 'customer.updated', undefined, s.token);
    const created = await t.request('PUT', `${API}/customers/7`, { token: s.token, body: { email: 'ada@example.com' } });
    const updated = await t.request('PUT', `${API}/customers/7`, { token: s.token, body: { email: 'ada@example.com', first_name: 'Ada' } });
    expect([created.statusCode, updated.statusCode]).toEqual([201, 200]);
    let rows = await storedDeliveries(t, s.shop.id);
    expect(rows.map((r) => [r.topic, r.body.data])).toEqual([
      ['customer.created', created.json().data],
      ['customer.updated', updated.json().data],
    ]);

    const file = [
      '{"remote_id": 7, "email": "ada@example.com", "last_name": "Lovelace"}',
      '{"remote_id": 8, "email": "grace@example.com"}',
      '{"remote_id": 9, "email": "bad"}',
    ].join('\n');
    const result = await importRecords(t.database.db, s.shop.id, customers, readNdjson(Readable.from([file])), t.clock.now, t.config);
    expect(result.imported).toBe(2);
    rows = (await storedDeliveries(t, s.shop.id)).slice(2);
    expect(rows.map((r) => [r.topic, r.body.data.remote_id, r.body.data.last_name ?? null])).toEqual([
      ['customer.updated', 7, 'Lovelace'],
      ['customer.created', 8, null],
    ]);
    expect(rows[1]!.body.data).toMatchObject({ email: 'grace@example.com', points_balance: 0, credits_balance: 0 });
  });

  it('announces a referral when its status becomes completed, once', async () => {
    const s = await shop();
    await createWebhook(t, 'referral.completed', undefined, s.token);
    const pending = await t.request('POST', `${API}/referrals`, { token: s.token, body: { referrer_remote_id: 1, referred_email: 'friend@example.com' } });
    expect(pending.statusCode).toBe(201);
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);
    const id = pending.json().data.id;
    // Completed by hand here (a friend's first paid order does it by itself: test/earning/referrals.test.ts).
    const completed = await t.request('POST', `${API}/referrals/${id}/complete`, { token: s.token });
    expect(completed.statusCode).toBe(200);
    const again = await t.request('POST', `${API}/referrals/${id}/complete`, { token: s.token });
    expect(again.statusCode).toBe(409);
    const other = await t.request('POST', `${API}/referrals`, { token: s.token, body: { referrer_remote_id: 2, referred_email: 'b@example.com' } });
    const direct = await t.request('POST', `${API}/referrals/${other.json().data.id}/complete`, { token: s.token });
    expect(direct.statusCode).toBe(200);
    const rows = await storedDeliveries(t, s.shop.id);
    expect(rows.map((r) => r.body.data)).toEqual([completed.json().data, direct.json().data]);
    expect(rows.every((r) => r.topic === 'referral.completed')).toBe(true);
  });

  it('announces the expiration events the sweep writes', async () => {
    const s = await shop({ per_event_expiry: true });
    await createWebhook(t, 'points_event.expired', undefined, s.token);
    const expiresAt = new Date(t.clock.now + DAY).toISOString();
    const res = await t.request('POST', `${API}/points_events`, { token: s.token, body: grant(2, 40, { expires_at: expiresAt }) });
    expect(res.statusCode).toBe(201);
    expect(await storedDeliveries(t, s.shop.id)).toEqual([]);
    t.clock.advance(2 * DAY);
    try {
      expect(await runJob(t, 'expire-lots')).toBeGreaterThanOrEqual(1);
      const rows = await storedDeliveries(t, s.shop.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.topic).toBe('points_event.expired');
      const listed = await t.request('GET', `${API}/customers/2/points_events`, { token: s.token, query: { 'sort[order_direction]': 'desc' } });
      expect(rows[0]!.body.data).toEqual(listed.json().data[0]);
      expect(rows[0]!.body.data).toMatchObject({
        source: 'expiration',
        points_amount: -40,
        customer: { remote_id: 2, email: 'customer2@example.com', points_balance: 0 },
      });
    } finally {
      t.clock.advance(-2 * DAY);
    }
  });

  it('only lists topics it delivers', async () => {
    const res = await t.request('POST', `${API}/webhooks`, { body: { topic: 'vip_tier.changed', url: 'https://example.com/h' } });
    expect(res.statusCode).toBe(422);
  });
});
