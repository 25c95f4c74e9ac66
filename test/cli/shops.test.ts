import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN } from '../../bench/lib/server.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { connect, type Database } from '../../src/db/connect.js';
import { recordStreamEvents } from '../../src/events/outbox.js';
import { API } from '../helpers/app.js';
import { cliContext, type CliContext, type CliShop } from '../helpers/cli.js';
import { createTestDatabase, rowsOfShop, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';
import { TOKEN_CACHE_MS } from '../../src/http/auth.js';
import { eraseShop } from '../../src/shops/erasure.js';
import { deliverDueWebhooks } from '../../src/webhooks/delivery.js';
import { sendExpiryReminders } from '../../src/ledger/reminders.js';
import { DAY_MS } from '../../src/clock.js';

// The `loyalty` command as a user runs it: the compiled CLI in a child process, on the test
// database. `npm test` builds it first.

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(databaseUrl: string, ...args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(databaseUrl: string, ...args: string[]): Promise<string> {
  const result = await cli(databaseUrl, ...args);
  if (result.code !== 0) throw new Error(`loyalty ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

describe(`loyalty shops and tokens (${TEST_DIALECT})`, () => {
  let testDb: TestDatabase;
  let url: string;
  let database: Database;
  let app: FastifyInstance;

  beforeAll(async () => {
    if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build (npm test does it)`);
    testDb = await createTestDatabase();
    url = testDb.url;
    // The CLI migrates on first use; the app opens the same database afterwards.
    await ok(url, 'migrate');
    database = connect(url);
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }, { databaseUrl: url, bootstrap: false }), { database });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    await testDb?.drop();
  });

  const get = (token: string, authorization = `Bearer ${token}`) => app.inject({ method: 'GET', url: `${API}/shop`, headers: { authorization } });

  it('creates a shop and prints exactly {"shop": …, "token": …} with --json; the token works', async () => {
    const created = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Acme Coffee', '--per-event-expiry', '--expiry-days', '30', '--json'));
    expect(Object.keys(created).sort()).toEqual(['shop', 'token']);
    expect(created.shop).toEqual({
      id: expect.any(Number),
      name: 'Acme Coffee',
      per_event_expiry: true,
      points_expiry_days: 30,
      points_pending_days: 0,
      vip_tier_window: 'lifetime',
      vip_tier_metric: 'points_earned',
      vip_tier_retention_days: null,
      currency: null,
      restore_redeemed_points_on_refund: true,
      timezone: 'UTC',
      points_expiry_mode: 'per_lot',
      points_inactivity_days: null,
      points_inactivity_since: null,
      expiry_reminder_days: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    expect(created.token).toMatch(/^lty_[\w-]{43}$/);
    const res = await get(created.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: created.shop.id, name: 'Acme Coffee', per_event_expiry: true, points_expiry_days: 30 });
    // The bare token works too.
    expect((await get(created.token, created.token)).statusCode).toBe(200);
  });

  it('prints the token for people without --json', async () => {
    const out = await ok(url, 'shops', 'create', '--name', 'Plain');
    expect(out).toMatch(/Created shop \d+ \(Plain\)/);
    const token = /(lty_[\w-]{43})/.exec(out)?.[1];
    expect(token).toBeDefined();
    expect((await get(token!)).statusCode).toBe(200);
  });

  it('lists shops as a table and as JSON', async () => {
    await ok(url, 'shops', 'create', '--name', 'Listed shop');
    const rows = JSON.parse(await ok(url, 'shops', 'list', '--json')).shops;
    expect(rows.map((s: { name: string }) => s.name)).toContain('Listed shop');
    const table = await ok(url, 'shops', 'list');
    expect(table.split('\n')[0]).toMatch(/^id\s+name\s+per_event_expiry\s+points_expiry_days\s+timezone\s+created_at/);
    expect(table).toContain('Listed shop');
  });

  it('updates a shop, and the API shows the change', async () => {
    const { shop, token } = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Before', '--expiry-days', '10', '--json'));
    const updated = JSON.parse(await ok(url, 'shops', 'update', String(shop.id), '--name', 'After', '--expiry-days', 'never', '--per-event-expiry', '--json'));
    expect(updated.shop).toMatchObject({ id: shop.id, name: 'After', points_expiry_days: null, per_event_expiry: true });
    expect((await get(token)).json().data).toMatchObject({ name: 'After', points_expiry_days: null, per_event_expiry: true });
    await ok(url, 'shops', 'update', String(shop.id), '--no-per-event-expiry');
    expect((await get(token)).json().data.per_event_expiry).toBe(false);
    expect((await get(token)).json().data.timezone).toBe('UTC');
    const moved = JSON.parse(await ok(url, 'shops', 'update', String(shop.id), '--timezone', 'Europe/Berlin', '--json'));
    expect(moved.shop.timezone).toBe('Europe/Berlin');
    expect((await get(token)).json().data.timezone).toBe('Europe/Berlin');
    const zoned = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Zoned', '--timezone', 'America/New_York', '--json'));
    expect((await get(zoned.token)).json().data.timezone).toBe('America/New_York');
  });

  it('sets every setting PATCH /shop takes, on create and on update, and the API shows them', async () => {
    const created = JSON.parse(
      await ok(
        url,
        ...['shops', 'create', '--name', 'Programme', '--points-pending-days', '14', '--vip-tier-metric', 'amount_spent', '--currency', 'EUR'],
        ...['--vip-tier-window', 'calendar_year', '--vip-tier-retention-days', '90', '--no-restore-redeemed-points-on-refund'],
        ...['--points-expiry-mode', 'inactivity', '--points-inactivity-days', '365', '--expiry-reminder-days', '7,30', '--json'],
      ),
    );
    const settings = {
      points_pending_days: 14,
      vip_tier_metric: 'amount_spent',
      currency: 'EUR',
      vip_tier_window: 'calendar_year',
      vip_tier_retention_days: 90,
      restore_redeemed_points_on_refund: false,
      points_expiry_mode: 'inactivity',
      points_inactivity_days: 365,
      expiry_reminder_days: [30, 7],
    };
    expect(created.shop).toMatchObject(settings);
    expect((await get(created.token)).json().data).toMatchObject({ ...settings, points_inactivity_since: expect.any(String) });
    const id = String(created.shop.id);
    const updated = JSON.parse(
      await ok(
        url,
        ...['shops', 'update', id, '--vip-tier-metric', 'orders_count', '--currency', 'none', '--vip-tier-retention-days', 'none'],
        ...[
          '--restore-redeemed-points-on-refund',
          '--points-expiry-mode',
          'per_lot',
          '--points-inactivity-days',
          'none',
          '--expiry-reminder-days',
          'none',
          '--json',
        ],
      ),
    );
    const changed = {
      vip_tier_metric: 'orders_count',
      currency: null,
      vip_tier_retention_days: null,
      restore_redeemed_points_on_refund: true,
      points_expiry_mode: 'per_lot',
      points_inactivity_days: null,
      points_inactivity_since: null,
      expiry_reminder_days: [],
    };
    expect(updated.shop).toMatchObject({ ...changed, points_pending_days: 14 });
    expect((await get(created.token)).json().data).toMatchObject(changed);
  });

  it('refuses a setting exactly as PATCH /shop does, names its flag, and changes nothing', async () => {
    const { shop, token } = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Judged', '--json'));
    // Every failure of the schema at once (as the API reports them all), then each check against the shop.
    const cases: [Record<string, unknown>, string[]][] = [
      [
        {
          points_pending_days: -1,
          vip_tier_metric: 'visits',
          vip_tier_window: 'weekly',
          vip_tier_retention_days: 0,
          currency: 'eur',
          points_inactivity_days: 'soon',
          expiry_reminder_days: [30, 'x'],
        },
        [
          ...['--points-pending-days', '-1', '--vip-tier-metric', 'visits', '--vip-tier-window', 'weekly', '--vip-tier-retention-days', '0'],
          ...['--currency', 'eur', '--points-inactivity-days', 'soon', '--expiry-reminder-days', '30,x'],
        ],
      ],
      [{ points_pending_days: 366, expiry_reminder_days: [1, 2, 3, 4] }, ['--points-pending-days', '366', '--expiry-reminder-days', '1,2,3,4']],
      [{ vip_tier_metric: 'amount_spent' }, ['--vip-tier-metric', 'amount_spent']],
      [{ points_expiry_mode: 'inactivity' }, ['--points-expiry-mode', 'inactivity']],
      [{ expiry_reminder_days: [7, 7] }, ['--expiry-reminder-days', '7,7']],
      [
        { points_expiry_mode: 'inactivity', points_inactivity_days: 10, expiry_reminder_days: [30] },
        ['--points-expiry-mode', 'inactivity', '--points-inactivity-days', '10', '--expiry-reminder-days', '30'],
      ],
    ];
    const before = (await get(token)).json().data;
    const runs = cases.flatMap(([body, args]) =>
      [
        ['shops', 'update', String(shop.id), ...args],
        ['shops', 'create', '--name', 'Refused', ...args],
      ].map((command) => ({ body, command })),
    );
    const results = await Promise.all(runs.map(({ command }) => cli(url, ...command)));
    for (const [i, { body, command }] of runs.entries()) {
      const res = await app.inject({ method: 'PATCH', url: `${API}/shop`, headers: { authorization: `Bearer ${token}` }, payload: body });
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      const details = res.json().error.details as { param: string; code: string; message: string }[];
      expect(details.length).toBeGreaterThan(body === cases[0]![0] ? 6 : 0);
      expect(results[i]!.code, command.join(' ')).toBe(2);
      for (const d of details) {
        const flag = `--${d.param.replace(/\[\d+\]$/, '').replace(/_/g, '-')}`;
        expect(results[i]!.stderr, command.join(' ')).toContain(`${flag}: ${d.message} (${d.code})`);
      }
    }
    expect((await get(token)).json().data).toEqual(before);
    const names = JSON.parse(await ok(url, 'shops', 'list', '--json')).shops.map((s: { name: string }) => s.name);
    expect(names).not.toContain('Refused');
    // A dozen CLI processes at once, on a shared machine.
  }, 180_000);

  it('creates, lists and revokes tokens; a revoked token answers 401, the others keep working', async () => {
    const { shop, token: first } = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Tokens', '--json'));
    const second = JSON.parse(await ok(url, 'tokens', 'create', '--shop', String(shop.id), '--name', 'ci', '--json'));
    expect(second).toEqual({
      id: expect.any(Number),
      shop_id: shop.id,
      name: 'ci',
      hint: `lty_…${second.token.slice(-4)}`,
      scopes: ['admin'],
      expires_at: null,
      token: expect.stringMatching(/^lty_/),
    });
    expect((await get(second.token)).statusCode).toBe(200);

    const listed = JSON.parse(await ok(url, 'tokens', 'list', '--shop', String(shop.id), '--json')).tokens;
    expect(listed.map((t: { name: string }) => t.name)).toEqual(['default', 'ci']);
    expect(JSON.stringify(listed)).not.toContain(second.token);
    expect(listed.every((t: { revoked_at: string | null }) => t.revoked_at === null)).toBe(true);

    expect(await ok(url, 'tokens', 'revoke', String(second.id), '--shop', String(shop.id))).toMatch(/Revoked token/);
    // The API process trusts a token it accepted for TOKEN_CACHE_MS; a revocation made by
    // another process (this CLI) must take effect within that window.
    const deadline = Date.now() + TOKEN_CACHE_MS + 1000;
    let res = await get(second.token);
    while (res.statusCode === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      res = await get(second.token);
    }
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect((await get(first)).statusCode).toBe(200);

    const after = JSON.parse(await ok(url, 'tokens', 'list', '--shop', String(shop.id), '--json')).tokens;
    expect(after.find((t: { id: number }) => t.id === second.id).revoked_at).toMatch(/Z$/);
    expect(await ok(url, 'tokens', 'list', '--shop', String(shop.id))).toMatch(/^id\s+name\s+hint/);
  });

  it('refuses bad input with a clear message and a non-zero exit', async () => {
    const cases: [string[], RegExp][] = [
      [['shops', 'create'], /required option '--name <name>'/],
      [['shops', 'create', '--name', '  '], /--name must be 1 to 255 characters/],
      [['shops', 'create', '--name', 'X', '--expiry-days', 'soon'], /--expiry-days must be a positive integer, got "soon"/],
      [['shops', 'create', '--name', 'X', '--expiry-days', '0'], /--expiry-days must be a positive integer/],
      [['shops', 'update', 'abc', '--name', 'X'], /shop id must be a positive integer, got "abc"/],
      [['shops', 'update', '999999', '--name', 'X'], /No shop with id 999999/],
      [['shops', 'update', '1'], /Nothing to change/],
      [['shops', 'update', '1', '--timezone', 'Mars/Olympus'], /--timezone must be an IANA time zone name such as Europe\/Berlin, got "Mars\/Olympus"/],
      [['shops', 'create', '--name', 'X', '--timezone', 'CEST+2'], /--timezone must be an IANA time zone name/],
      [['tokens', 'create', '--shop', '999999'], /No shop with id 999999/],
      [['tokens', 'revoke', '999999', '--shop', '1'], /Shop 1 has no token 999999/],
      [['tokens', 'list'], /required option '--shop <id>'/],
      [['shops', 'frobnicate'], /unknown command 'frobnicate'/],
      [['shops', 'delete'], /required option '--shop <id>'/],
      [['shops', 'delete', '--shop', '999999'], /No shop with id 999999/],
      [['shops', 'delete', '--shop', '999999', '--yes'], /No shop with id 999999/],
      [['shops', 'delete', '--shop', '999999', '--yes', '--chunk-size', '0'], /--chunk-size must be a positive integer, got "0"/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(url, ...args)));
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it('says what is wrong with a bad DATABASE_URL', async () => {
    const result = await cli('mysql://localhost/x', 'shops', 'list');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^error: DATABASE_URL must start with sqlite: or postgres:\/\//);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe(`loyalty shops delete (${TEST_DIALECT})`, () => {
  let t: CliContext;
  beforeAll(async () => {
    t = await cliContext();
  });
  afterAll(() => t?.close());

  /** A shop with rows in every table: the demo's, plus what the demo does not write, over HTTP. */
  const filledShop = async (name: string): Promise<CliShop> => {
    const target = await t.createShop(name);
    const send = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object, headers: Record<string, string> = {}) => {
      const res = await t.app.inject({
        method,
        url: `${API}/${path}`,
        headers: { authorization: `Bearer ${target.token}`, ...headers },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode, `${method} ${path}: ${res.body}`).toBeLessThan(300);
      return res.json().data;
    };
    await send('POST', 'webhooks', { topic: 'customer.created', url: 'https://example.com/hooks' });
    await send('POST', 'campaigns', { name: 'Spring', starts_at: '2026-03-01T00:00:00Z', ends_at: '2026-04-01T00:00:00Z', bonus_points: 5 });
    await t.ok('demo', '--shop', String(target.shop.id), '--customers', '12');
    const reward = await send('POST', 'rewards', { name: 'From the pool', points_price: 10, kind: 'free_shipping', value: 0 });
    await send('POST', `rewards/${reward.id}/codes`, { codes: [`POOL-${target.shop.id}-1`, `POOL-${target.shop.id}-2`] });
    await send('POST', 'redemptions', { reward_id: reward.id, customer_identifier: '1' }, { 'idempotency-key': 'redeem-1' });
    const { referral_code } = await send('GET', 'customers/1');
    await send('POST', 'referrals', { referral_code, referred_email: 'friend@example.com' });
    await send('PUT', 'subscription_contracts/77', { customer_remote_id: 1, status: 'active', next_billing_date: '2027-01-01T00:00:00.000Z' });
    await send('POST', 'memberships/subscription_billing_attempts', {
      subscription_contract_remote_id: 77,
      status: 'succeeded',
      amount: 19.9,
      currency: 'EUR',
    });
    await send('DELETE', 'customers/12');
    await send('POST', 'storefront_keys', { allowed_origins: ['https://shop.example'] });
    // A way to earn done once (its count and its distinct_id).
    await send('POST', 'earning_rules', { kind: 'custom_action', name: 'newsletter', points_amount: 5 });
    await send('POST', 'customers/1/actions', { name: 'newsletter', distinct_id: 'newsletter-1' });
    // An expiry reminder sent, and the reminder's cursor.
    await send('POST', 'webhooks', { topic: 'points.expiring', url: 'https://example.com/expiring' });
    await t.app.inject({
      method: 'PATCH',
      url: `${API}/shop`,
      headers: { authorization: `Bearer ${target.token}` },
      payload: { per_event_expiry: true, expiry_reminder_days: [30] },
    });
    await send('PUT', 'customers/500', { email: 'expiring@example.com' });
    await send('POST', 'points_events', {
      customer_identifier: '500',
      source: 'manual',
      points_amount: 5,
      expires_at: new Date(Date.now() + 5 * DAY_MS).toISOString(),
    });
    // A store connection with a delivery of each kind of record it keeps: an order (its source's updated_at) and a refund.
    const store = await send('POST', 'connections', { platform: 'shopify', name: 'Store', shop_domain: 'leaving.myshopify.com', secret: 'store-secret' });
    const order = { id: 9001, currency: 'EUR', subtotal_price: '10.00', financial_status: 'paid', customer: null, updated_at: '2026-03-01T10:00:00-05:00' };
    const refund = { id: 77, order_id: 9001, refund_line_items: [{ subtotal: '1.00' }] };
    for (const [topic, body] of [
      ['orders/paid', { ...order, processed_at: order.updated_at }],
      ['refunds/create', refund],
    ] as const) {
      const text = JSON.stringify(body);
      const signature = createHmac('sha256', 'store-secret').update(text).digest('base64');
      const res = await t.app.inject({
        method: 'POST',
        url: `/ingest/v1/shopify/${store.id}`,
        headers: { 'content-type': 'application/json', 'x-shopify-topic': topic, 'x-shopify-hmac-sha256': signature, 'x-shopify-event-id': `${name}-${topic}` },
        payload: text,
      });
      expect(res.json(), topic).toEqual({ status: 'applied' });
    }
    await sendExpiryReminders(t.database.db, Date.now());
    // A relay of the event stream in the middle of publishing the shop's events: its lease.
    await t.database.db
      .insertInto('stream_leases')
      .values({ shop_id: target.shop.id, claimed_by: 'a relay', claimed_until: Date.now() + 60_000 })
      .execute();
    await deliverDueWebhooks(t.database.db, {
      clock: Date.now,
      transport: async () => ({ status: 200 }),
      timeoutMs: 1000,
      batchSize: 50,
      allowPrivateAddresses: true,
    });
    return target;
  };

  const rowsOf = (target: CliShop) => rowsOfShop(t.database.db, target.shop.id);
  const shopStatus = async (target: CliShop) => (await t.get(target.token, 'shop')).status;
  const verify = async () => JSON.parse(await t.ok('verify', '--json'));

  /** Every table the catalogue lists holds rows of the shop: what follows tests every kind of table. */
  const expectInEveryTable = (rows: Record<string, number>) => expect(Object.keys(rows).filter((table) => rows[table] === 0)).toEqual([]);
  const expectNothingLeft = (rows: Record<string, number>) => expect(Object.entries(rows).filter(([, n]) => n > 0)).toEqual([]);

  let erased: CliShop;
  let kept: CliShop;
  let keptRows: Record<string, number>;
  let erasedRows: Record<string, number>;
  beforeAll(async () => {
    // As with EVENT_STREAM_URL set: the stream's outbox holds the shops' events too.
    recordStreamEvents(true);
    erased = await filledShop('Leaving');
    kept = await filledShop('Staying');
    recordStreamEvents(false);
    erasedRows = await rowsOf(erased);
    keptRows = await rowsOf(kept);
  });

  it('without --yes deletes nothing, says what it would delete and exits 2', async () => {
    expectInEveryTable(erasedRows);
    const json = await t.run('shops', 'delete', '--shop', String(erased.shop.id), '--json');
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toEqual({ shop_id: erased.shop.id, would_delete: erasedRows });
    expect(json.stderr).toMatch(new RegExp(`^error: shop ${erased.shop.id} \\(Leaving\\) was not erased: add --yes to delete its \\d+ rows for good\n$`));

    const plain = await t.run('shops', 'delete', '--shop', String(erased.shop.id));
    expect(plain.code).toBe(2);
    expect(plain.stdout).toMatch(/^Erasing shop \d+ \(Leaving\) would delete, irreversibly:\ntable\s+rows\n/);
    expect(plain.stdout).toMatch(/\npoints_events\s+\d+\n/);
    expect(await rowsOf(erased)).toEqual(erasedRows);
    expect(await shopStatus(erased)).toBe(200);
  });

  it('erases every row of the shop in transactions of at most --chunk-size rows; the other shop keeps all of its data', async () => {
    const chunk = 4;
    const out = JSON.parse(await t.ok('shops', 'delete', '--shop', String(erased.shop.id), '--yes', '--chunk-size', String(chunk), '--json'));
    expect(out.shop_id).toBe(erased.shop.id);
    expect(out.deleted).toEqual(erasedRows);
    // One transaction per chunk at least, besides the revocation and the shop's own row.
    const chunks = Object.values(erasedRows).reduce((sum, n) => sum + Math.ceil(n / chunk), 0);
    expect(out.transactions).toBeGreaterThan(chunks);

    expectNothingLeft(await rowsOf(erased));
    expect(await shopStatus(erased)).toBe(401);
    expect((await t.get(erased.token, 'shop')).body.error.code).toBe('unauthorized');
    expect(JSON.parse(await t.ok('shops', 'list', '--json')).shops.map((s: { id: number }) => s.id)).not.toContain(erased.shop.id);

    expect(await rowsOf(kept)).toEqual(keptRows);
    expect(await shopStatus(kept)).toBe(200);
    expect(await verify()).toEqual({ ok: true, discrepancies: [] });
  });

  it('once erased, the shop is not there: a re-run exits 2 and deletes nothing', async () => {
    for (const args of [['--yes'], []]) {
      const again = await t.run('shops', 'delete', '--shop', String(erased.shop.id), ...args);
      expect(again.code).toBe(2);
      expect(again.stderr).toBe(`error: No shop with id ${erased.shop.id}\n`);
    }
    expect(await rowsOf(kept)).toEqual(keptRows);
  });

  it('a re-run finishes an erasure that was interrupted, and tells people what it deleted', async () => {
    const target = await filledShop('Interrupted');
    const before = await rowsOf(target);
    const firstRun: Record<string, number> = {};
    let chunks = 0;
    const interrupted = eraseShop(t.database.db, target.shop.id, {
      chunkSize: 3,
      settleMs: 0,
      onChunk(table, rows) {
        expect(rows).toBeLessThanOrEqual(3);
        firstRun[table] = (firstRun[table] ?? 0) + rows;
        if (++chunks === 12) throw new Error('interrupted');
      },
    });
    await expect(interrupted).rejects.toThrow('interrupted');
    // Half erased: its tokens are revoked at once, its row and some of its data remain.
    const half = await rowsOf(target);
    expect(half.shops).toBe(1);
    expect(half.customers).toBe(before.customers);
    expect(Object.values(half).reduce((a, b) => a + b, 0)).toBeLessThan(Object.values(before).reduce((a, b) => a + b, 0));
    const tokens = await t.database.db.selectFrom('api_tokens').select('revoked_at').where('shop_id', '=', target.shop.id).execute();
    expect(tokens.map((r) => r.revoked_at)).not.toContain(null);

    const out = await t.ok('shops', 'delete', '--shop', String(target.shop.id), '--yes');
    expect(out).toMatch(new RegExp(`^Erased shop ${target.shop.id} \\(Interrupted\\) in \\d+ transactions:\ntable\\s+rows\n`));
    const total = Object.values(half).reduce((a, b) => a + b, 0);
    expect(out).toMatch(new RegExp(`\ntotal\\s+${total}$`, 'm'));
    expectNothingLeft(await rowsOf(target));
    // What the two runs deleted together is what the shop had.
    for (const [table, n] of Object.entries(half)) firstRun[table] = (firstRun[table] ?? 0) + n;
    expect(Object.fromEntries(Object.entries(firstRun).filter(([, n]) => n > 0))).toEqual(Object.fromEntries(Object.entries(before).filter(([, n]) => n > 0)));

    expect(await rowsOf(kept)).toEqual(keptRows);
    expect(await verify()).toEqual({ ok: true, discrepancies: [] });
  });
});
