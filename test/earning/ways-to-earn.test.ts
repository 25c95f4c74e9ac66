import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { connect } from '../../src/db/connect.js';
import { API, errorOf, setup, type TestContext, type TestShop } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { asCustomer, createKey, customerToken, STOREFRONT } from '../storefront/fixtures.js';

// Ways to earn (docs/earning.md): custom_action and visit_url rules, the merchant's actions
// and the shopper's claims, their limits per calendar period in the shop's time zone (a
// half-hour offset, a daylight-saving change), racing requests and replays.

const MIN = 60_000;

/** The available_at of a limit_reached answer. */
const availableAt = (res: LightMyRequestResponse) => (errorOf(res).details?.[0] as { available_at?: string | null } | undefined)?.available_at;

describe(`ways to earn (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: Date.parse('2026-03-01T12:00:00Z'), shop: { timezone: 'Asia/Kolkata' } });
    for (const id of [1, 2, 3, 4, 5]) {
      const res = await t.request('PUT', `${API}/customers/${id}`, { body: { email: `c${id}@example.com` } });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(() => t.close());

  const rule = async (body: Record<string, unknown>, shop: TestShop = t) => {
    const res = await t.request('POST', `${API}/earning_rules`, { body, token: shop.token });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const act = (customer: string | number, body: Record<string, unknown>, options: { token?: string; headers?: Record<string, string> } = {}) =>
    t.request('POST', `${API}/customers/${customer}/actions`, { body, ...options });
  const balance = async (id: number, shop: TestShop = t) =>
    (await t.request('GET', `${API}/customers/${id}`, { token: shop.token })).json().data.points_balance;

  it('keeps one enabled rule per name for ways to earn, one per kind for the others, and checks their fields', async () => {
    const newsletter = await rule({ kind: 'custom_action', name: 'newsletter', description: 'Join our newsletter', points_amount: 50 });
    expect(newsletter).toMatchObject({ kind: 'custom_action', name: 'newsletter', limit_count: 1, limit_period: 'lifetime', claimable: false, enabled: true });
    const visit = await rule({ kind: 'visit_url', name: 'blog', url: 'https://example.com/blog', points_amount: 5, limit_count: 1, limit_period: 'day' });
    expect(visit).toMatchObject({ claimable: true, url: 'https://example.com/blog' });
    await rule({ kind: 'custom_action', name: 'review', points_amount: 20, credits_amount: 1.5, limit_count: 3, limit_period: 'month', claimable: true });
    await rule({ kind: 'order', points_per_unit: 1, unit_amount: 1 });

    const refusals: [Record<string, unknown>, string, string][] = [
      [{ kind: 'custom_action', name: 'newsletter', points_amount: 1 }, 'name', 'rule_name_taken'],
      [{ kind: 'order', points_per_unit: 2, unit_amount: 1 }, 'kind', 'rule_kind_taken'],
      [{ kind: 'visit_url', name: 'nowhere', points_amount: 1 }, 'url', 'missing'],
      [{ kind: 'custom_action', points_amount: 1 }, 'name', 'missing'],
      [{ kind: 'custom_action', name: 'free', limit_count: 2 }, 'points_amount', 'missing'],
      [{ kind: 'signup', points_amount: 1, name: 'x', limit_period: 'day' }, 'name', 'not_applicable'],
      [{ kind: 'visit_url', name: 'ftp', url: 'ftp://example.com/', points_amount: 1 }, 'url', 'invalid_format'],
      [{ kind: 'custom_action', name: 'weird', points_amount: 1, limit_count: 1, limit_period: 'hour' }, 'limit_period', 'invalid_value'],
    ];
    for (const [body, param, code] of refusals) {
      const res = await t.request('POST', `${API}/earning_rules`, { body });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(
        errorOf(res).details?.map((d) => d.param),
        JSON.stringify(body),
      ).toContain(param);
      if (code !== 'invalid_format' && code !== 'invalid_value') expect(errorOf(res).details).toContainEqual(expect.objectContaining({ param, code }));
    }
    const review = await rule({ kind: 'custom_action', name: 'thrice', points_amount: 1, limit_count: 3 });
    expect(review).toMatchObject({ limit_count: 3, limit_period: 'lifetime' });
    const unlimited = await t.request('PATCH', `${API}/earning_rules/${review.id}`, { body: { limit_period: null } });
    expect(errorOf(unlimited).details).toContainEqual(expect.objectContaining({ param: 'limit_period', code: 'missing' }));
    const unclaim = await t.request('PATCH', `${API}/earning_rules/${visit.id}`, { body: { claimable: false } });
    expect(unclaim.statusCode).toBe(422);
    expect(errorOf(unclaim).details).toContainEqual(expect.objectContaining({ param: 'claimable', code: 'not_applicable' }));
    // Disabled, a name may be used again.
    const old = await rule({ kind: 'custom_action', name: 'retired', points_amount: 1, enabled: false });
    await rule({ kind: 'custom_action', name: 'retired', points_amount: 2, enabled: false });
    expect((await t.request('PATCH', `${API}/earning_rules/${old.id}`, { body: { enabled: true } })).statusCode).toBe(200);
  });

  it('grants an action through the ledger once per distinct_id, and refuses past a lifetime limit', async () => {
    const first = await act(1, { name: 'newsletter', distinct_id: 'nl-1' });
    expect(first.statusCode, first.body).toBe(201);
    const event = first.json().data;
    expect(event).toMatchObject({ source: 'custom_action', custom_action_name: 'newsletter', points_amount: 50, earning_rule_id: expect.any(Number) });
    expect(event.customer).toMatchObject({ remote_id: 1, points_balance: 50 });
    // The same distinct_id again, under another key: the first event, nothing granted.
    const again = await act('c1@example.com', { name: 'newsletter', distinct_id: 'nl-1' }, { headers: { 'idempotency-key': 'other' } });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data.id).toBe(event.id);
    expect(await balance(1)).toBe(50);
    // Another action: past the limit, never again.
    const past = await act(1, { name: 'newsletter', distinct_id: 'nl-2' });
    expect(past.statusCode).toBe(422);
    expect(errorOf(past)).toMatchObject({ code: 'limit_reached', details: [{ param: 'name', code: 'limit_reached', available_at: null }] });
    // No enabled rule of the name, an unknown customer, a bad body.
    expect(errorOf(await act(1, { name: 'nothing' })).code).toBe('rule_not_found');
    expect((await act(99, { name: 'newsletter' })).statusCode).toBe(404);
    const bad = await act(1, { name: '', distinct_id: 'x'.repeat(256), extra: 1 });
    expect(bad.statusCode).toBe(422);
    expect(await balance(1)).toBe(50);
    const list = (await t.request('GET', `${API}/customers/1/points_events`)).json().data;
    expect(list.filter((e: { source: string }) => e.source === 'custom_action')).toHaveLength(1);
    await expectConsistentLedger(t);
  });

  it('replays an Idempotency-Key and grants a credit and points rule by e-mail', async () => {
    const headers = { 'idempotency-key': 'review-key' };
    const first = await act('c2@example.com', { name: 'review' }, { headers });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json().data).toMatchObject({ points_amount: 20, credits_amount: 1.5 });
    const replay = await act('c2@example.com', { name: 'review' }, { headers });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expect(await balance(2)).toBe(20);
    await expectConsistentLedger(t);
  });

  it("counts a day in the shop's zone with a half-hour offset (Asia/Kolkata), and weeks from Monday", async () => {
    await rule({ kind: 'custom_action', name: 'checkin', points_amount: 1, limit_count: 2, limit_period: 'day' });
    await rule({ kind: 'custom_action', name: 'weekly', points_amount: 3, limit_count: 1, limit_period: 'week' });
    // 23:59 in Kolkata on Sunday 1 March (18:29 UTC).
    t.clock.now = Date.parse('2026-03-01T18:29:00Z');
    expect((await act(3, { name: 'checkin' })).statusCode).toBe(201);
    expect((await act(3, { name: 'checkin' })).statusCode).toBe(201);
    expect((await act(3, { name: 'weekly' })).statusCode).toBe(201);
    const third = await act(3, { name: 'checkin' });
    expect(errorOf(third)).toMatchObject({ code: 'limit_reached', details: [{ available_at: '2026-03-01T18:30:00.000Z' }] });
    expect(availableAt(await act(3, { name: 'weekly' }))).toBe('2026-03-01T18:30:00.000Z');
    // A minute later it is Monday in Kolkata: a new day and a new week.
    t.clock.advance(MIN);
    expect((await act(3, { name: 'checkin' })).statusCode).toBe(201);
    expect((await act(3, { name: 'weekly' })).statusCode).toBe(201);
    expect(availableAt(await act(3, { name: 'weekly' }))).toBe('2026-03-08T18:30:00.000Z');
    expect(await balance(3)).toBe(1 + 1 + 3 + 1 + 3);
    await expectConsistentLedger(t);
  });

  it('counts a day of 25 hours across a daylight-saving change (Australia/Adelaide)', async () => {
    const other = await t.createShop({ timezone: 'Australia/Adelaide' });
    await t.request('PUT', `${API}/customers/1`, { body: { email: 'a@example.com' }, token: other.token });
    await rule({ kind: 'visit_url', name: 'daily_visit', url: 'https://example.com/', points_amount: 7, limit_count: 1, limit_period: 'day' }, other);
    // 00:15 on Sunday 5 April, still daylight time (+10:30); at 03:00 the clocks go back to +09:30.
    t.clock.now = Date.parse('2026-04-04T13:45:00Z');
    expect((await act(1, { name: 'daily_visit' }, { token: other.token })).statusCode).toBe(201);
    // 23:30 the same day (+09:30): 24 hours and 45 minutes later, still the same day.
    t.clock.now = Date.parse('2026-04-05T14:00:00Z');
    const refused = await act(1, { name: 'daily_visit' }, { token: other.token });
    expect(errorOf(refused)).toMatchObject({ code: 'limit_reached', details: [{ available_at: '2026-04-05T14:30:00.000Z' }] });
    t.clock.now = Date.parse('2026-04-05T14:30:00Z');
    expect((await act(1, { name: 'daily_visit' }, { token: other.token })).statusCode).toBe(201);
    expect(await balance(1, other)).toBe(14);
    await expectConsistentLedger(t, other.shop.id);
  });

  it('grants once when twenty requests race against a limit of one, on one app and on two', async () => {
    await rule({ kind: 'custom_action', name: 'race', points_amount: 10 });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => act(4, { name: 'race', distinct_id: `r${i}` })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, ...Array<number>(19).fill(422)]);
    for (const a of answers.filter((x) => x.statusCode === 422)) expect(errorOf(a).code).toBe('limit_reached');

    // A second app on the same database, as another process would be.
    const database = connect(t.url);
    const second = await buildApp(t.config, { database, clock: t.clock.read });
    try {
      const via = (app: typeof second, i: number) =>
        app.inject({
          method: 'POST',
          url: `${API}/customers/5/actions`,
          headers: { authorization: `Bearer ${t.token}` },
          payload: { name: 'race', distinct_id: `s${i}` },
        });
      const both = await Promise.all(Array.from({ length: 20 }, (_, i) => via(i % 2 === 0 ? t.app : second, i)));
      expect(both.map((a) => a.statusCode).sort()).toEqual([201, ...Array<number>(19).fill(422)]);
      // Twenty copies of one distinct_id under a roomier limit: one grant, the others its event.
      await rule({ kind: 'custom_action', name: 'roomy', points_amount: 1, limit_count: 100, limit_period: 'year' });
      const copies = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? t.app : second).inject({
            method: 'POST',
            url: `${API}/customers/5/actions`,
            headers: { authorization: `Bearer ${t.token}` },
            payload: { name: 'roomy', distinct_id: 'same' },
          }),
        ),
      );
      expect(copies.map((a) => a.statusCode).sort()).toEqual([...Array<number>(19).fill(200), 201]);
      expect(new Set(copies.map((a) => a.json().data.id)).size).toBe(1);
    } finally {
      await second.close();
      await database.close();
    }
    expect(await balance(4)).toBe(10);
    expect(await balance(5)).toBe(11);
    await expectConsistentLedger(t);
  });

  it('shows ways to earn on the storefront and lets the shopper claim a claimable one, within its limit', async () => {
    t.clock.now = Date.parse('2026-03-10T06:00:00Z');
    const key = await createKey(t);
    const programme = await t.app.inject({ method: 'GET', url: `${STOREFRONT}/programme`, headers: { 'x-publishable-key': key.publishable_key } });
    expect(programme.statusCode).toBe(200);
    const ways = programme.json().data.ways_to_earn as { id: number; name: string }[];
    expect(ways.map((w) => w.name)).toEqual(expect.arrayContaining(['newsletter', 'blog', 'review', 'checkin']));
    expect(programme.json().data.earning_rules.map((r: { kind: string }) => r.kind)).toEqual(['order']);
    const id = (name: string) => ways.find((w) => w.name === name)!.id;

    const token = await customerToken(t, key, { sub: '2' });
    const mine = async () => (await asCustomer(t, 'GET', '/me/ways_to_earn', token)).json().data as Record<string, unknown>[];
    expect((await mine()).find((w) => w.name === 'blog')).toMatchObject({ completed: 0, available: true, available_at: null, claimable: true });
    const claimed = await asCustomer(t, 'POST', '/me/actions', token, { body: { rule_id: id('blog') } });
    expect(claimed.statusCode, claimed.body).toBe(201);
    expect(claimed.json().data).toMatchObject({ source: 'visit_url', custom_action_name: 'blog', points_amount: 5 });
    expect(claimed.json().data).not.toHaveProperty('internal_note');
    const again = await asCustomer(t, 'POST', '/me/actions', token, { body: { rule_id: id('blog') } });
    // The next midnight in Kolkata.
    expect(errorOf(again)).toMatchObject({ code: 'limit_reached', details: [{ available_at: '2026-03-10T18:30:00.000Z' }] });
    expect((await mine()).find((w) => w.name === 'blog')).toMatchObject({ completed: 1, available: false, available_at: '2026-03-10T18:30:00.000Z' });
    // The review was done once this month (by the merchant); the newsletter is not claimable.
    expect((await mine()).find((w) => w.name === 'review')).toMatchObject({ completed: 1, available: true });
    expect(errorOf(await asCustomer(t, 'POST', '/me/actions', token, { body: { rule_id: id('newsletter') } })).code).toBe('rule_not_found');
    expect(errorOf(await asCustomer(t, 'POST', '/me/actions', token, { body: { rule_id: 999_999 } })).code).toBe('rule_not_found');
    expect(await balance(2)).toBe(25);
    await expectConsistentLedger(t);
  });
});
