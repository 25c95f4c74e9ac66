import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN } from '../../bench/lib/server.js';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { connect, type Database } from '../../src/db/connect.js';
import { jobs } from '../../src/jobs.js';
import { pruneExpiryReminders } from '../../src/ledger/reminders.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createWebhook, FakeTransport, storedDeliveries } from '../webhooks/fixtures.js';
import { createCustomers, expectConsistentLedger, postEvent } from './fixtures.js';

// Expiry reminders (docs/ledger.md, "Expiry reminders"): points.expiring once per customer,
// expiry instant and reminder, whichever process runs the job and however often.

const START = Date.UTC(2026, 0, 15, 12);
const at = (days: number) => START + days * DAY;
const iso = (days: number) => new Date(at(days)).toISOString();

const remind = (app: FastifyInstance) => jobs.find((j) => j.name === 'send-expiry-reminders')!.run(app);

/**
 * The reminder job run once at `now` by a process of its own on the database (the compiled
 * modules, as `loyalty serve` runs them): processes run it truly at once, on SQLite too.
 */
function remindInProcess(url: string, now: number): Promise<void> {
  const module = (file: string) => JSON.stringify(pathToFileURL(path.join(path.dirname(MAIN), file)).href);
  const script = `const { connect } = await import(${module('db/connect.js')});
    const { sendExpiryReminders } = await import(${module('ledger/reminders.js')});
    const database = connect(process.env.DATABASE_URL);
    await sendExpiryReminders(database.db, ${now});
    await database.close();`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, DATABASE_URL: url } }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(),
    );
  });
}

interface Reminder {
  customer: { remote_id: string; email: string | null };
  points: number;
  credits: number;
  expires_at: string;
  days_before: number;
}

describe(`expiry reminders (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock) and move its clock on: they run in order.
  let t: TestContext;
  const transport = new FakeTransport();
  /** Another app instance on the same database: another process, or this one restarted. */
  const others: { app: FastifyInstance; database: Database }[] = [];
  async function anotherApp(): Promise<FastifyInstance> {
    const database = connect(t.url);
    const app = await buildApp(t.config, { database, clock: t.clock.read, webhookTransport: transport.send });
    others.push({ app, database });
    return app;
  }
  const sent = async (shopId = t.shop.id): Promise<Reminder[]> =>
    (await storedDeliveries(t, shopId)).filter((d) => d.topic === 'points.expiring').map((d) => d.body.data as Reminder);

  beforeAll(async () => {
    t = await setup({ now: START, shop: { per_event_expiry: true }, webhookTransport: transport.send });
    await createCustomers(t, 3);
    await createWebhook(t, 'points.expiring');
  });
  afterAll(async () => {
    for (const other of others) {
      await other.app.close();
      await other.database.close();
    }
    await t.close();
  });

  it('sends a reminder once, for the next lots expiring at an instant, with what they hold', async () => {
    expect((await t.request('PATCH', `${API}/shop`, { body: { expiry_reminder_days: [7, 30] } })).json().data.expiry_reminder_days).toEqual([30, 7]);
    for (const event of [
      { customer_identifier: '1', source: 'manual', points_amount: 100, credits_amount: 1.5, expires_at: iso(40) },
      { customer_identifier: '1', source: 'manual', points_amount: 20, expires_at: iso(40) },
      { customer_identifier: '1', source: 'manual', points_amount: 50, expires_at: iso(80) },
      { customer_identifier: '2', source: 'manual', points_amount: 10, expires_at: iso(50) },
    ])
      expect((await postEvent(t, event)).statusCode).toBe(201);
    await remind(t.app);
    expect(await sent()).toEqual([]);
    t.clock.now = at(10) - 1;
    await remind(t.app);
    expect(await sent()).toEqual([]);
    t.clock.now = at(10);
    await remind(t.app);
    await remind(t.app);
    expect(await sent()).toEqual([
      { customer: { remote_id: '1', email: 'customer1@example.com' }, points: 120, credits: 1.5, expires_at: iso(40), days_before: 30 },
    ]);
    await expectConsistentLedger(t);
  });

  it('sends it once after a restart, and once with two processes running the job together', async () => {
    t.clock.now = at(20);
    const restarted = await anotherApp();
    await remind(restarted);
    expect((await sent()).map((r) => [r.customer.remote_id, r.days_before])).toEqual([
      ['1', 30],
      ['2', 30],
    ]);
    await remind(restarted);
    t.clock.now = at(33);
    await Promise.all([remindInProcess(t.url, t.clock.now), remindInProcess(t.url, t.clock.now), remindInProcess(t.url, t.clock.now)]);
    await remind(restarted);
    expect((await sent()).map((r) => [r.customer.remote_id, r.expires_at, r.days_before])).toEqual([
      ['1', iso(40), 30],
      ['2', iso(50), 30],
      ['1', iso(40), 7],
    ]);
    await jobs.find((j) => j.name === 'deliver-webhooks')!.run(t.app);
    const delivered = transport.requests.map((r) => JSON.parse(r.body).data as Reminder).map((r) => [r.customer.remote_id, r.days_before]);
    expect(delivered).toEqual([
      ['1', 30],
      ['2', 30],
      ['1', 7],
    ]);
    await expectConsistentLedger(t);
  });

  it('reminds of the next expiry once the earlier one is gone, for every reminder', async () => {
    t.clock.now = at(43);
    await jobs.find((j) => j.name === 'expire-lots')!.run(t.app);
    await remind(t.app);
    t.clock.now = at(50);
    await remind(t.app);
    expect((await sent()).slice(3).map((r) => [r.customer.remote_id, r.points, r.expires_at, r.days_before])).toEqual([
      ['2', 10, iso(50), 7],
      ['1', 50, iso(80), 30],
    ]);
    await expectConsistentLedger(t);
  });

  it('reminds before a balance falls due for inactivity, after the grace, once', async () => {
    const other = await t.createShop();
    await createCustomers(t, 2, 1, other.token);
    const hook = await t.request('POST', `${API}/webhooks`, { token: other.token, body: { topic: 'points.expiring', url: 'https://example.com/h' } });
    expect(hook.statusCode).toBe(201);
    const grant = (c: string, points: number) =>
      t.request('POST', `${API}/points_events`, { token: other.token, body: { customer_identifier: c, source: 'manual', points_amount: points } });
    expect((await grant('1', 30)).statusCode).toBe(201);
    const switched = t.clock.now;
    const res = await t.request('PATCH', `${API}/shop`, {
      token: other.token,
      body: { points_expiry_mode: 'inactivity', points_inactivity_days: 30, expiry_reminder_days: [7, 3] },
    });
    expect(res.statusCode, res.body).toBe(200);
    t.clock.now = switched + 5 * DAY;
    expect((await grant('2', 40)).statusCode).toBe(201);
    // Customer 1 falls due a period after the switch; customer 2 a period after their grant.
    t.clock.now = switched + 23 * DAY - 1;
    await remind(t.app);
    expect(await sent(other.shop.id)).toEqual([]);
    t.clock.now = switched + 23 * DAY;
    await Promise.all([remindInProcess(t.url, t.clock.now), remindInProcess(t.url, t.clock.now)]);
    await remind(t.app);
    t.clock.now = switched + 28 * DAY;
    await remind(others[0]!.app);
    await remindInProcess(t.url, t.clock.now);
    const due = (days: number) => new Date(switched + days * DAY).toISOString();
    expect((await sent(other.shop.id)).map((r) => [r.customer.remote_id, r.points, r.expires_at, r.days_before])).toEqual([
      ['1', 30, due(30), 7],
      ['2', 40, due(35), 7],
      ['1', 30, due(30), 3],
    ]);
    await expectConsistentLedger(t, null);
  });

  it('prunes a reminder a day after the expiry it reminds of, in bounded batches, and never sends it again', async () => {
    const stored = async () =>
      (
        await t.database.db
          .selectFrom('expiry_reminders')
          .select(['shop_id', 'customer_remote_id', 'expires_at', 'days_before'])
          .orderBy('shop_id')
          .orderBy('expires_at')
          .orderBy('customer_remote_id')
          .orderBy('days_before')
          .execute()
      ).map((r) => [Number(r.shop_id), Number(r.customer_remote_id), Number(r.expires_at), Number(r.days_before)]);
    const all = await stored();
    const mine = (expiresAt: number) => all.filter(([shop, , at]) => shop === t.shop.id && at === expiresAt);
    expect(mine(at(40))).toHaveLength(2);
    expect(mine(at(50))).toHaveLength(2);
    const sentBefore = (await sent()).length;
    // Until a day after its expiry a reminder stays; then the batches take the oldest first.
    expect(await pruneExpiryReminders(t.database.db, at(41))).toBe(0);
    expect(await pruneExpiryReminders(t.database.db, at(41) + 1, 1, 1)).toBe(1);
    // One of the two oldest (which of them is the database's choice).
    const left = await stored();
    expect(left).toHaveLength(all.length - 1);
    expect(left.filter(([shop, , expiresAt]) => shop === t.shop.id && expiresAt === at(40))).toHaveLength(1);
    expect(await pruneExpiryReminders(t.database.db, at(51) + 1, 2)).toBe(3);
    expect(await stored()).toEqual(all.filter(([, , expiresAt]) => expiresAt! > at(50)));
    // The job prunes what passed by its clock, and the reminders pruned are not sent again.
    t.clock.now = at(82);
    await jobs.find((j) => j.name === 'prune-expiry-reminders')!.run(t.app);
    expect((await stored()).filter(([shop]) => shop === t.shop.id)).toEqual([]);
    await remind(t.app);
    expect(await sent()).toHaveLength(sentBefore);
  });
});
