import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrator.js';
import { API, errorOf, setup, type TestContext, type TestShop } from '../helpers/app.js';
import { migrateBefore, TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, grant, storedDeliveries } from './fixtures.js';

// A webhook subscribes to several topics (`topics`, or ["*"] for all); `topic` stays accepted
// as a list of one, and shows the first of the list. Deliveries go to every webhook whose
// topics hold the event's, one secret per endpoint whatever its topics.

describe(`webhooks with several topics (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  async function shop(): Promise<TestShop> {
    const s = await t.createShop();
    await createCustomers(t, [1, 2], s.token);
    return s;
  }
  const post = (s: TestShop, body: Record<string, unknown>) => t.request('POST', `${API}/webhooks`, { token: s.token, body });
  const URL = 'https://example.com/hooks';

  it('takes topics or topic, and shows both consistently', async () => {
    const s = await shop();
    const many = await post(s, { topics: ['points_event.created', 'customer.updated'], url: URL });
    expect(many.statusCode, many.body).toBe(201);
    expect(many.json().data).toMatchObject({ topics: ['points_event.created', 'customer.updated'], topic: 'points_event.created' });
    expect(many.json().data.secret).toMatch(/^whsec_/);
    const one = await post(s, { topic: 'customer.created', url: URL });
    expect(one.json().data).toMatchObject({ topics: ['customer.created'], topic: 'customer.created' });
    const all = await post(s, { topics: ['*'], url: URL });
    expect(all.json().data).toMatchObject({ topics: ['*'], topic: '*' });
    const both = await post(s, { topic: 'customer.updated', topics: ['customer.updated', 'customer.created'], url: URL });
    expect(both.statusCode, both.body).toBe(201);

    const id = many.json().data.id;
    const patchTopic = await t.request('PATCH', `${API}/webhooks/${id}`, { token: s.token, body: { topic: 'redemption.created' } });
    expect(patchTopic.json().data).toMatchObject({ topics: ['redemption.created'], topic: 'redemption.created' });
    const patchTopics = await t.request('PATCH', `${API}/webhooks/${id}`, { token: s.token, body: { topics: ['campaign.ended', 'campaign.started'] } });
    expect(patchTopics.json().data).toMatchObject({ topics: ['campaign.ended', 'campaign.started'], topic: 'campaign.ended' });
    const shown = (await t.request('GET', `${API}/webhooks/${id}`, { token: s.token })).json().data;
    expect(shown).toMatchObject({ topics: ['campaign.ended', 'campaign.started'], topic: 'campaign.ended' });
    expect(shown.secret).toBeUndefined();
  });

  it('refuses topics that are none, mixed with "*", or at odds with topic', async () => {
    const s = await shop();
    const refused = async (body: Record<string, unknown>) => (errorOf(await post(s, { url: URL, ...body })).details ?? []).map((d) => [d.param, d.code]);
    expect(await refused({})).toEqual([['topics', 'missing']]);
    expect(await refused({ topics: [] })).toEqual([['topics', 'missing']]);
    expect(await refused({ topics: ['*', 'customer.created'] })).toEqual([['topics', 'invalid_topics']]);
    expect(await refused({ topic: 'customer.created', topics: ['customer.updated'] })).toEqual([['topic', 'conflicting_topics']]);
    expect((await refused({ topics: ['customer.created', 'nothing.happened'] }))[0]?.[0]).toMatch(/^topics/);
    expect((await refused({ topics: ['customer.created', 'customer.created'] }))[0]?.[0]).toMatch(/^topics/);
    expect((await refused({ topics: 'customer.created' }))[0]?.[0]).toMatch(/^topics/);
  });

  it('delivers each event to every webhook whose topics hold it, once per webhook', async () => {
    const s = await shop();
    const both = (await post(s, { topics: ['points_event.created', 'customer.updated'], url: URL })).json().data;
    const all = (await post(s, { topics: ['*'], url: URL })).json().data;
    const other = (await post(s, { topics: ['customer.created', 'redemption.created'], url: URL })).json().data;
    expect((await t.request('POST', `${API}/points_events/batch`, { token: s.token, body: { points_events: [grant(1, 10)] } })).statusCode).toBe(201);
    expect((await t.request('PUT', `${API}/customers/2`, { token: s.token, body: { email: 'new@example.com' } })).statusCode).toBe(200);
    const rows = await storedDeliveries(t, s.shop.id);
    const to = (hook: { id: number }) => rows.filter((r) => r.webhook_id === hook.id).map((r) => r.topic);
    expect(to(both)).toEqual(['points_event.created', 'customer.updated']);
    expect(to(all)).toEqual(['points_event.created', 'customer.updated']);
    expect(to(other)).toEqual([]);
    // One event, one id, whichever webhooks it goes to.
    expect(new Set(rows.filter((r) => r.topic === 'points_event.created').map((r) => r.event_id)).size).toBe(1);
  });

  it('gives a webhook written before migration 019 its one topic as a list', async () => {
    const s = await shop();
    const hook = (await post(s, { topic: 'customer.updated', url: URL })).json().data;
    await migrateBefore(t.database.db, '019_campaigns');
    expect(await migrateToLatest(t.database.db)).toContain('019_campaigns');
    expect((await t.request('GET', `${API}/webhooks/${hook.id}`, { token: s.token })).json().data).toMatchObject({
      topics: ['customer.updated'],
      topic: 'customer.updated',
    });
    expect((await t.request('PUT', `${API}/customers/1`, { token: s.token, body: { email: 'changed@example.com' } })).statusCode).toBe(200);
    expect((await storedDeliveries(t, s.shop.id)).map((r) => [r.webhook_id, r.topic])).toEqual([[hook.id, 'customer.updated']]);
  });
});
