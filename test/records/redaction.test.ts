import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPostgres } from '../../src/db/dialect.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createWebhook } from '../webhooks/fixtures.js';

// DELETE /customers/{customer_identifier}: the person is erased from every table, the ledger is
// kept under an anonymous customer. The `it` blocks share one shop, in order.

const PERSON = {
  email: 'Augusta.Ada+loyalty@Example.com',
  first_name: 'Augusta',
  last_name: 'Byronlovelace',
  phone: '+44 20 7946 0999',
  birthday: '1815-12-10',
};
const NOTE = 'delivered to Augusta at home';
/** Every trace of the person: no table may hold any of these (case-insensitively) afterwards. */
const TRACES = [PERSON.email, 'augusta.ada', PERSON.first_name, PERSON.last_name, PERSON.phone, PERSON.birthday, NOTE];

/** Every row of every table of the database, as text, table by table. */
async function allRows(t: TestContext): Promise<Map<string, string>> {
  const db = t.database.db;
  const { rows: tables } = isPostgres(db)
    ? await sql<{
        name: string;
      }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(db)
    : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db);
  const out = new Map<string, string>();
  for (const { name } of tables) out.set(name, JSON.stringify((await sql`select * from ${sql.table(name)}`.execute(db)).rows).toLowerCase());
  return out;
}

/** The tables in which any of the traces is found. */
async function tracesFound(t: TestContext): Promise<string[]> {
  const found: string[] = [];
  for (const [table, text] of await allRows(t)) for (const trace of TRACES) if (text.includes(trace.toLowerCase())) found.push(`${trace} in ${table}`);
  return found;
}

/** Every points event of the shop through the API, both pages. */
async function ledgerTotals(t: TestContext) {
  const events: { points_amount: number; credits_amount: number; source: string; customer: { remote_id: number } }[] = [];
  let since = 0;
  for (;;) {
    const page = (await t.request('GET', `${API}/points_events`, { query: { 'pagination[since_id]': String(since), 'pagination[limit]': '250' } })).json();
    events.push(...page.data);
    if (page.links.next_since_id === null) break;
    since = page.links.next_since_id;
  }
  return {
    count: events.length,
    points: events.reduce((sum, e) => sum + e.points_amount, 0),
    credits: Math.round(events.reduce((sum, e) => sum + e.credits_amount, 0) * 100),
    sources: events.map((e) => e.source).sort(),
  };
}

describe(`customer redaction (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let before: Awaited<ReturnType<typeof ledgerTotals>>;
  let redactedAt: string;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('holds the person in many tables before', async () => {
    for (const topic of ['customer.created', 'customer.updated', 'points_event.created', 'referral.completed', 'customer.redacted'])
      await createWebhook(t, topic);
    await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1 } });
    await t.request('POST', `${API}/earning_rules`, { body: { kind: 'referral_friend', points_amount: 50 } });
    await t.request('POST', `${API}/earning_rules`, { body: { kind: 'referral_referrer', points_amount: 70 } });
    await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Silver', points_threshold: 100 } });
    expect((await t.request('PUT', `${API}/customers/2`, { body: { email: 'grace@example.com', first_name: 'Grace' } })).statusCode).toBe(201);
    // Invited before she is a customer, by the e-mail she then signs up with (Gmail rules aside, case differs).
    expect(
      (await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 2, referred_email: 'augusta.ada+loyalty@example.com' } })).statusCode,
    ).toBe(201);
    const put = await t.request('PUT', `${API}/customers/1`, { body: PERSON, headers: { 'idempotency-key': 'put-ada' } });
    expect(put.statusCode).toBe(201);
    const grant = await t.request('POST', `${API}/points_events`, {
      body: { customer_identifier: PERSON.email, source: 'manual', points_amount: 300, credits_amount: 5, internal_note: NOTE, external_note: NOTE },
      headers: { 'idempotency-key': 'grant-ada' },
    });
    expect(grant.statusCode).toBe(201);
    await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '2', source: 'manual', points_amount: 40, internal_note: 'for Grace' } });
    await t.request('PUT', `${API}/orders/10`, {
      body: { customer_remote_id: 1, total: 80, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-10T00:00:00Z' },
    });
    expect((await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 1, referred_email: 'friend@example.com' } })).statusCode).toBe(201);
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Tote', points_price: 100, kind: 'free_product', value: 10 } })).json().data;
    expect((await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '1' } })).statusCode).toBe(201);
    await t.request('PUT', `${API}/subscription_contracts/5`, { body: { customer_remote_id: 1, status: 'active', next_billing_date: '2026-02-01T00:00:00Z' } });

    const referral = (await t.request('GET', `${API}/referrals`, { query: { 'pagination[per_page]': '10' } }))
      .json()
      .data.find((r: { referrer_remote_id: number }) => r.referrer_remote_id === 2);
    expect(referral).toMatchObject({ status: 'completed', referred_remote_id: 1 });
    expect((await t.request('GET', `${API}/customers/1`)).json().data.vip_tier).toMatchObject({ name: 'Silver' });
    before = await ledgerTotals(t);
    const found = await tracesFound(t);
    for (const table of ['customers', 'points_events', 'referrals', 'idempotency_keys', 'webhook_deliveries'])
      expect(
        found.some((f) => f.endsWith(` in ${table}`)),
        table,
      ).toBe(true);
  });

  it('erases the person from every table and keeps the ledger', async () => {
    t.clock.advance(60_000);
    const res = await t.request('DELETE', `${API}/customers/${encodeURIComponent(PERSON.email.toUpperCase())}`);
    expect(res.statusCode, res.body).toBe(200);
    redactedAt = new Date(t.clock.now).toISOString();
    expect(res.json()).toEqual({ data: { remote_id: 1, redacted: true, redacted_at: redactedAt } });

    expect(await tracesFound(t)).toEqual([]);
    expect(await ledgerTotals(t)).toEqual(before);
    const anonymous = (await t.request('GET', `${API}/points_events`, { query: { 'pagination[per_page]': '100' } })).json().data;
    const theirs = anonymous.filter((e: { customer: { remote_id: number } }) => e.customer.remote_id < 0);
    expect(theirs.length).toBeGreaterThan(0);
    expect(new Set(theirs.map((e: { customer: { remote_id: number } }) => e.customer.remote_id)).size).toBe(1);
    expect(theirs.every((e: { customer: { email: unknown }; internal_note: unknown }) => e.customer.email === null && e.internal_note === null)).toBe(true);
    // The other customer keeps their notes.
    expect(anonymous.some((e: { internal_note: unknown }) => e.internal_note === 'for Grace')).toBe(true);
  });

  it('leaves nothing to read under the old remote_id or e-mail', async () => {
    for (const path of [
      `customers/1`,
      `customers/${encodeURIComponent(PERSON.email)}`,
      `customers/1/points_events`,
      `customers/1/export`,
      `customers/1/vip_tier_history`,
    ]) {
      const res = await t.request('GET', `${API}/${path}`);
      expect(res.statusCode, path).toBe(404);
      expect(errorOf(res).code).toBe('not_found');
    }
    expect((await t.request('GET', `${API}/customers`, { query: { email: PERSON.email } })).json().data).toEqual([]);
    const listed = (await t.request('GET', `${API}/customers`, { query: { 'pagination[per_page]': '10' } })).json();
    expect(listed.data.map((c: { remote_id: number }) => c.remote_id)).toEqual([2]);
    // The offset pages' total (shop_counts) counts the listed customers only.
    const single = (await t.request('GET', `${API}/customers`, { query: { 'pagination[per_page]': '1' } })).json();
    expect(single.links.next).toBeNull();
    expect(decodeURIComponent(single.links.last)).toContain('pagination[page]=1');
    expect((await t.request('GET', `${API}/points_events`, { query: { customer_identifier: '1' } })).json().data).toEqual([]);
  });

  it('answers a repeated DELETE as the first, and sends customer.redacted once', async () => {
    t.clock.advance(60_000);
    const again = await t.request('DELETE', `${API}/customers/1`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ data: { remote_id: 1, redacted: true, redacted_at: redactedAt } });
    const sent = await t.database.db.selectFrom('webhook_deliveries').select('payload').where('topic', '=', 'customer.redacted').execute();
    expect(sent.map((d) => JSON.parse(d.payload).data)).toEqual([{ remote_id: 1, redacted: true, redacted_at: redactedAt }]);
    // By e-mail, nothing is kept to answer with.
    expect((await t.request('DELETE', `${API}/customers/${encodeURIComponent(PERSON.email)}`)).statusCode).toBe(404);
    expect((await t.request('DELETE', `${API}/customers/404404`)).statusCode).toBe(404);
  });

  it('replays a stored response without the person', async () => {
    const replay = await t.request('POST', `${API}/points_events`, {
      body: { customer_identifier: PERSON.email, source: 'manual', points_amount: 300, credits_amount: 5, internal_note: NOTE, external_note: NOTE },
      headers: { 'idempotency-key': 'grant-ada' },
    });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.toLowerCase()).not.toContain('augusta');
    expect(replay.json().data.customer.remote_id).toBeLessThan(0);
    expect(await ledgerTotals(t)).toEqual(before);
  });

  it('answers a replay of the PUT that wrote the person 404, without their data, and does not run it again', async () => {
    for (let i = 0; i < 2; i++) {
      const replay = await t.request('PUT', `${API}/customers/1`, { body: PERSON, headers: { 'idempotency-key': 'put-ada' } });
      expect(replay.statusCode, replay.body).toBe(404);
      expect(errorOf(replay)).toMatchObject({ code: 'not_found', message: 'Customer 1 was erased after this request; its response is no longer kept' });
      expect(replay.body.toLowerCase()).not.toContain('augusta');
      expect((await t.request('GET', `${API}/customers/1`)).statusCode).toBe(404);
    }
    const other = await t.request('PUT', `${API}/customers/1`, { body: { email: 'x@example.com' }, headers: { 'idempotency-key': 'put-ada' } });
    expect(errorOf(other).code).toBe('idempotency_key_mismatch');
    expect(await tracesFound(t)).toEqual([]);
  });

  it('lets a later PUT with the remote_id start a new customer', async () => {
    const res = await t.request('PUT', `${API}/customers/1`, { body: { email: 'someone.else@example.com' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({ remote_id: 1, points_balance: 0, credits_balance: 0, points_earned_lifetime: 0, vip_tier: null, first_name: null });
    expect((await t.request('GET', `${API}/customers/1/points_events`)).json().data).toEqual([]);
    expect((await t.request('GET', `${API}/customers/1/export`)).json().data).toMatchObject({
      points_events: [],
      orders: [],
      redemptions: [],
      referrals: [],
      vip_tier_history: [],
    });
    // Deleting the new one redacts it too, under a new tombstone time.
    t.clock.advance(DAY);
    const second = await t.request('DELETE', `${API}/customers/1`);
    expect(second.json().data.redacted_at).toBe(new Date(t.clock.now).toISOString());
  });

  it('cancelled the pending referrals they made, so that none can pay the anonymous customer', async () => {
    const theirs = (await t.request('GET', `${API}/referrals`, { query: { 'pagination[per_page]': '10' } }))
      .json()
      .data.find((r: { referred_email: string }) => r.referred_email === 'friend@example.com');
    expect(theirs).toMatchObject({ status: 'cancelled', cancelled_at: redactedAt, completed_at: null });
    expect(theirs.referrer_remote_id).toBeLessThan(0);
    const complete = await t.request('POST', `${API}/referrals/${theirs.id}/complete`);
    expect(errorOf(complete).code).toBe('referral_not_pending');
    // The friend signs up and pays: the referral stays cancelled and nobody earns by it.
    expect((await t.request('PUT', `${API}/customers/3`, { body: { email: 'friend@example.com' } })).statusCode).toBe(201);
    await t.request('PUT', `${API}/orders/11`, {
      body: { customer_remote_id: 3, total: 20, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-11T00:00:00Z' },
    });
    expect((await t.request('GET', `${API}/referrals/${theirs.id}`)).json().data.status).toBe('cancelled');
    expect((await t.request('GET', `${API}/customers/3`)).json().data.points_balance).toBe(20);
  });

  it('cancels a pending referral that invited the person', async () => {
    expect((await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 2, referred_email: 'Newcomer@example.com' } })).statusCode).toBe(201);
    expect((await t.request('PUT', `${API}/customers/4`, { body: { email: 'newcomer@example.com' } })).statusCode).toBe(201);
    expect((await t.request('DELETE', `${API}/customers/4`)).statusCode).toBe(200);
    const invited = (await t.request('GET', `${API}/referrals`, { query: { 'pagination[per_page]': '10' } })).json().data.at(-1);
    expect(invited).toMatchObject({ referrer_remote_id: 2, referred_email: '', status: 'cancelled' });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
