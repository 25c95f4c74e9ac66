import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releasePendingPoints } from '../../src/earning/jobs.js';
import { importRecords } from '../../src/records/import.js';
import { customers } from '../../src/records/resources/customers.js';
import { retierShops } from '../../src/tiers/jobs.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createWebhook, runJob } from '../webhooks/fixtures.js';

// A customer's updated_at moves on every change a client can see (fields, balances, pending
// points, tier), and only then (docs/pagination.md, "updated_at"): updated_at[gte] syncs
// balances, and a PUT or an import of an unchanged body neither moves it nor sends
// customer.updated. The `it` blocks share one shop and one clock, in order.

const START = Date.UTC(2026, 2, 1, 12);
const ADA = { email: 'ada@example.com', first_name: 'Ada' };

describe(`customers' updated_at (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: START, shop: { per_event_expiry: true } });
    await createWebhook(t, 'customer.updated');
  });
  afterAll(() => t.close());

  const iso = () => new Date(t.clock.now).toISOString();
  const updatedAt = async (id = 1) => (await t.request('GET', `${API}/customers/${id}`)).json().data.updated_at as string;
  const sent = async () => (await t.database.db.selectFrom('webhook_deliveries').select('payload').where('topic', '=', 'customer.updated').execute()).length;
  const changedSince = async (since: string) =>
    (await t.request('GET', `${API}/customers`, { query: { 'updated_at[gte]': since } })).json().data.map((c: { remote_id: number }) => c.remote_id);
  /** Moves the clock on and returns the new time: what updated_at becomes if a write moves it. */
  const later = () => {
    t.clock.advance(60_000);
    return iso();
  };

  it('does not move, nor send customer.updated, when a PUT changes nothing', async () => {
    const created = iso();
    expect((await t.request('PUT', `${API}/customers/1`, { body: ADA })).statusCode).toBe(201);
    later();
    const same = await t.request('PUT', `${API}/customers/1`, { body: { first_name: 'Ada', email: 'ada@example.com' } });
    expect(same.statusCode).toBe(200);
    expect(same.json().data.updated_at).toBe(created);
    expect(await updatedAt()).toBe(created);
    expect(await sent()).toBe(0);

    const changed = later();
    const renamed = await t.request('PUT', `${API}/customers/1`, { body: { ...ADA, last_name: 'Lovelace' } });
    expect(renamed.json().data.updated_at).toBe(changed);
    expect(await sent()).toBe(1);
  });

  it('does not move for an imported row that changes nothing, and moves for one that does', async () => {
    const before = await updatedAt();
    t.clock.advance(60_000);
    const rows = async function* () {
      yield { line: 1, body: { remote_id: 1, ...ADA, last_name: 'Lovelace' } };
      yield { line: 2, body: { remote_id: 2, email: 'grace@example.com' } };
    };
    expect(await importRecords(t.database.db, t.shop.id, customers, rows(), t.clock.now, t.config)).toEqual({ imported: 2, rejected: [] });
    expect(await updatedAt()).toBe(before);
    expect(await sent()).toBe(1);
    const now = later();
    const renamed = async function* () {
      yield { line: 1, body: { remote_id: 1, ...ADA, last_name: 'Byron' } };
    };
    await importRecords(t.database.db, t.shop.id, customers, renamed(), t.clock.now, t.config);
    expect(await updatedAt()).toBe(now);
    expect(await sent()).toBe(2);
  });

  it('moves when a points event changes a balance, without customer.updated (points events have their own webhooks)', async () => {
    const now = later();
    expect(await changedSince(now)).toEqual([]);
    const res = await t.request('POST', `${API}/points_events`, {
      body: { customer_identifier: '1', source: 'manual', points_amount: 50, expires_at: new Date(t.clock.now + DAY).toISOString() },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(await updatedAt()).toBe(now);
    expect(await changedSince(now)).toEqual([1]);
    expect(await sent()).toBe(2);
  });

  it('moves when the expiry sweep writes an expiration off', async () => {
    t.clock.advance(2 * DAY);
    const swept = iso();
    expect(await changedSince(swept)).toEqual([]);
    await runJob(t, 'expire-lots');
    expect(await updatedAt()).toBe(swept);
    expect(await changedSince(swept)).toEqual([1]);
  });

  it('moves when re-tiering changes the tier', async () => {
    expect((await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Silver', points_threshold: 40 } })).statusCode).toBe(201);
    const retiered = later();
    await retierShops(t.database.db, t.clock.now);
    expect((await t.request('GET', `${API}/customers/1`)).json().data).toMatchObject({ vip_tier: { name: 'Silver' }, updated_at: retiered });
    // Customer 2 earned nothing: re-tiering changed nothing of theirs.
    expect(await changedSince(retiered)).toEqual([1]);
  });

  it('moves when pending points are added and released', async () => {
    expect((await t.request('PATCH', `${API}/shop`, { body: { points_pending_days: 1 } })).statusCode).toBe(200);
    expect((await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1 } })).statusCode).toBe(201);
    const paid = later();
    const order = { customer_remote_id: 2, total: 30, currency: 'EUR', financial_status: 'paid', placed_at: paid };
    expect((await t.request('PUT', `${API}/orders/7`, { body: order })).statusCode).toBe(201);
    expect((await t.request('GET', `${API}/customers/2`)).json().data).toMatchObject({ points_pending: 30, updated_at: paid });
    t.clock.advance(DAY);
    const released = iso();
    await releasePendingPoints(t.database.db, t.clock.now);
    expect((await t.request('GET', `${API}/customers/2`)).json().data).toMatchObject({ points_pending: 0, points_balance: 30, updated_at: released });
    expect(await sent()).toBe(2);
  });

  it('does not move a native record on a PATCH that changes nothing', async () => {
    const created = iso();
    const tier = (await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 } })).json().data;
    later();
    const same = await t.request('PATCH', `${API}/vip_tiers/${tier.id}`, { body: { name: 'Gold' } });
    expect(same.statusCode).toBe(200);
    expect(same.json().data.updated_at).toBe(created);
    const now = later();
    expect((await t.request('PATCH', `${API}/vip_tiers/${tier.id}`, { body: { name: 'Gold+' } })).json().data.updated_at).toBe(now);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
