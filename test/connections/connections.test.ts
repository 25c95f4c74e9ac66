import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { connect, type Database } from '../../src/db/connect.js';
import { pruneBodies } from '../../src/connections/repository.js';
import { sendSampleDeliveries } from '../../src/cli/sample-deliveries.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { shopifyCustomer, shopifyHeaders, shopifyOrder, shopifyRefund, sign, wooHeaders, wooOrder } from './payloads.js';

// Store connections over HTTP (docs/connections.md): the CRUD, signed ingestion from Shopify and
// WooCommerce with realistic bodies, exactly once in any order, the delivery log and replay.
// The `it` blocks share one shop and one clock, in order; each uses ids of its own.

const SECRET = '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';
const WOO_SECRET = 'wc-secret-with-some-length';
const START = Date.UTC(2026, 2, 1, 12);

describe(`store connections (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let shopify: number;
  let woo: number;
  let second: { app: FastifyInstance; database: Database };
  beforeAll(async () => {
    t = await setup({ now: START, config: { publicUrl: 'https://loyalty.example.com', authFailures: { max: 4, windowMs: 60_000 } } });
    const rule = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1, currency: 'EUR' } });
    expect(rule.statusCode, rule.body).toBe(201);
    const a = await t.request('POST', `${API}/connections`, {
      body: { platform: 'shopify', name: 'Main store', shop_domain: 'example.myshopify.com', secret: SECRET },
    });
    expect(a.statusCode, a.body).toBe(201);
    shopify = a.json().data.id;
    const b = await t.request('POST', `${API}/connections`, {
      body: { platform: 'woocommerce', name: 'Woo store', store_url: 'https://shop.example.com', secret: WOO_SECRET },
    });
    expect(b.statusCode, b.body).toBe(201);
    woo = b.json().data.id;
    // A second process on the same database.
    const database = connect(t.url);
    second = { database, app: await buildApp(t.config, { database, clock: t.clock.read }) };
  });
  afterAll(async () => {
    await second.app.close();
    await second.database.close();
    await t.close();
  });

  const send = (path: string, headers: Record<string, string>, body: string, app: FastifyInstance = t.app) =>
    app.inject({ method: 'POST', url: `/ingest/v1/${path}`, headers, payload: body });
  const shop = async (topic: string, payload: unknown, eventId?: string, app?: FastifyInstance) => {
    const body = JSON.stringify(payload);
    return send(`shopify/${shopify}`, shopifyHeaders(topic, body, SECRET, eventId), body, app);
  };
  const wc = async (topic: string, payload: unknown) => {
    const body = JSON.stringify(payload);
    return send(`woocommerce/${woo}`, wooHeaders(topic, body, WOO_SECRET), body);
  };
  const statusOf = (res: { statusCode: number; body: string; json(): { status?: string } }) => {
    expect(res.statusCode, res.body).toBe(200);
    return res.json().status;
  };
  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const order = async (id: number) => (await t.request('GET', `${API}/orders/${id}`)).json().data;
  const deliveries = async (id: number, query: Record<string, string> = {}) =>
    (await t.request('GET', `${API}/connections/${id}/deliveries`, { query: { 'pagination[limit]': '250', ...query } })).json().data;

  it('creates, lists, updates and deletes connections: the secret never shown, the ingest URL always', async () => {
    const got = await t.request('GET', `${API}/connections/${shopify}`);
    expect(got.json().data).toMatchObject({
      id: shopify,
      platform: 'shopify',
      shop_domain: 'example.myshopify.com',
      store_url: null,
      earn_on: 'subtotal',
      accept_test_orders: false,
      status: 'active',
      ingest_url: `https://loyalty.example.com/ingest/v1/shopify/${shopify}`,
    });
    expect(got.body).not.toContain(SECRET);
    const cursor = (await t.request('GET', `${API}/connections`, { query: { 'pagination[since_id]': '0', 'pagination[limit]': '1' } })).json();
    expect(cursor.data.map((c: { id: number }) => c.id)).toEqual([shopify]);
    expect(cursor.links.next_since_id).toBe(shopify);
    const offset = (
      await t.request('GET', `${API}/connections`, { query: { 'pagination[per_page]': '1', 'pagination[page]': '2', 'sort[order_type]': 'name' } })
    ).json();
    expect(offset.data.map((c: { name: string }) => c.name)).toEqual(['Woo store']);
    const bad = await t.request('POST', `${API}/connections`, { body: { platform: 'shopify', name: 'x', store_url: 'https://a.example', secret: 'abcdefgh' } });
    expect(
      errorOf(bad)
        .details!.map((d) => d.param)
        .sort(),
    ).toEqual(['shop_domain', 'store_url']);
    const extra = await t.request('POST', `${API}/connections`, {
      body: { platform: 'woocommerce', name: 'Spare', store_url: 'https://spare.example.com', secret: 'another-secret' },
    });
    const spare = extra.json().data.id;
    const patched = await t.request('PATCH', `${API}/connections/${spare}`, { body: { status: 'paused', secret: 'rotated-secret' } });
    expect(patched.json().data).toMatchObject({ status: 'paused' });
    expect(patched.body).not.toContain('rotated-secret');
    const audit = (await t.request('GET', `${API}/audit_events`, { query: { resource: 'connection', resource_id: String(spare) } })).json().data;
    expect(audit.map((a: { action: string }) => a.action).sort()).toEqual(['connection.created', 'connection.updated']);
    expect(JSON.stringify(audit)).not.toContain('rotated-secret');
    // Paused: the platform is told to come back later.
    const body = JSON.stringify({ id: 1 });
    const paused = await send(`woocommerce/${spare}`, wooHeaders('customer.updated', body, 'rotated-secret'), body);
    expect(paused.statusCode).toBe(503);
    expect(paused.headers['retry-after']).toBeDefined();
    expect((await t.request('DELETE', `${API}/connections/${spare}`)).statusCode).toBe(200);
    const scoped = await t.createShop();
    const other = await t.request('GET', `${API}/connections/${shopify}`, { token: scoped.token });
    expect(other.statusCode).toBe(404);
  });

  it('answers one 401 to a bad signature and to an unknown connection, stores nothing, and counts them per address', async () => {
    const body = JSON.stringify(shopifyOrder({ id: 9001, customer: null, subtotal: 1000, updatedAt: START }));
    const wrong = await send(`shopify/${shopify}`, { ...shopifyHeaders('orders/paid', body, SECRET), 'x-shopify-hmac-sha256': sign(body, 'nope') }, body);
    const unknown = await send(`shopify/999999`, shopifyHeaders('orders/paid', body, SECRET), body);
    const otherPlatform = await send(`woocommerce/${shopify}`, wooHeaders('order.updated', body, SECRET), body);
    const junk = await send(`shopify/1e3`, shopifyHeaders('orders/paid', body, SECRET), body);
    for (const res of [wrong, unknown, otherPlatform, junk]) {
      expect(res.statusCode).toBe(401);
      expect(errorOf(res)).toMatchObject({ code: 'invalid_signature', message: errorOf(wrong).message });
    }
    expect(await deliveries(shopify)).toEqual([]);
    expect((await t.request('GET', `${API}/orders/9001`)).statusCode).toBe(404);
    const limited = await send(`shopify/${shopify}`, { ...shopifyHeaders('orders/paid', body, SECRET), 'x-shopify-hmac-sha256': 'AAAA' }, body);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    // The address's unknown API tokens are refused too: one count for both.
    const token = await t.request('GET', `${API}/shop`, { token: 'lty_unknown' });
    expect(token.statusCode).toBe(429);
    // A valid signature from the same address is never refused (platforms share addresses).
    expect(statusOf(await send(`shopify/${shopify}`, shopifyHeaders('orders/paid', body, SECRET), body))).toBe('applied');
  });
  it('writes a Shopify order as PUT /orders does: the customer, its points, once per event, and never an older payload', async () => {
    const ada = { id: 7_100_000_000_001, email: 'ada@example.com', updatedAt: START };
    const paid = shopifyOrder({ id: 5_500_000_000_001, customer: ada, subtotal: 12_050, updatedAt: START + 1000, codes: ['WELCOME5'] });
    expect(statusOf(await shop('orders/paid', paid, 'evt-paid-1'))).toBe('applied');
    expect(await order(5_500_000_000_001)).toMatchObject({
      customer_remote_id: ada.id,
      total: 120.5,
      currency: 'EUR',
      financial_status: 'paid',
      discount_codes: ['WELCOME5'],
      placed_at: new Date(START + 1000 - 60_000).toISOString(),
      points_earned: 120,
    });
    expect(await customer(ada.id)).toMatchObject({ email: 'ada@example.com', first_name: 'Ada', points_balance: 120 });
    // The same event again: nothing more.
    expect(statusOf(await shop('orders/paid', paid, 'evt-paid-1'))).toBe('duplicate');
    // An older payload of the order (another event) changes nothing.
    const older = shopifyOrder({ id: 5_500_000_000_001, customer: ada, subtotal: 12_050, financialStatus: 'pending', updatedAt: START });
    expect(statusOf(await shop('orders/updated', older, 'evt-old'))).toBe('stale');
    expect(await order(5_500_000_000_001)).toMatchObject({ financial_status: 'paid' });
    // A test order is ignored; a guest order is written and earns nothing.
    const test = shopifyOrder({ id: 5_500_000_000_002, customer: ada, subtotal: 5000, updatedAt: START, test: true });
    expect(statusOf(await shop('orders/paid', test))).toBe('ignored');
    const guest = shopifyOrder({ id: 5_500_000_000_003, customer: null, subtotal: 5000, updatedAt: START });
    expect(statusOf(await shop('orders/paid', guest))).toBe('applied');
    expect(await order(5_500_000_000_003)).toMatchObject({ customer_remote_id: null, points_earned: 0 });
    // Cancelled, and partially paid: not paid, nothing earned.
    const cancelled = shopifyOrder({ id: 5_500_000_000_004, customer: ada, subtotal: 5000, updatedAt: START, cancelled: true });
    expect(statusOf(await shop('orders/cancelled', cancelled))).toBe('applied');
    expect(await order(5_500_000_000_004)).toMatchObject({ financial_status: 'cancelled', points_earned: 0 });
    const partly = shopifyOrder({ id: 5_500_000_000_005, customer: ada, subtotal: 5000, updatedAt: START, financialStatus: 'partially_paid' });
    expect(statusOf(await shop('orders/updated', partly))).toBe('applied');
    expect(await order(5_500_000_000_005)).toMatchObject({ points_earned: 0 });
    // customers/update with a newer updated_at changes the name; the birthday set through the API stays.
    expect(
      (await t.request('PUT', `${API}/customers/${ada.id}`, { body: { email: 'ada@example.com', first_name: 'Ada', birthday: '1815-12-10' } })).statusCode,
    ).toBe(200);
    expect(statusOf(await shop('customers/update', shopifyCustomer({ ...ada, firstName: 'Augusta', updatedAt: START + 5000 })))).toBe('applied');
    expect(await customer(ada.id)).toMatchObject({ first_name: 'Augusta', birthday: '1815-12-10', points_balance: 120 });
    expect(statusOf(await shop('customers/update', shopifyCustomer({ ...ada, firstName: 'Old', updatedAt: START + 10 })))).toBe('stale');
    await expectConsistentLedger(t);
  });

  it('never counts a refund twice, in either order, and keeps a refund that comes before its order', async () => {
    const grace = { id: 7_100_000_000_002, email: 'grace@example.com', updatedAt: START };
    const id = 5_500_000_000_010;
    expect(statusOf(await shop('orders/paid', shopifyOrder({ id, customer: grace, subtotal: 10_000, updatedAt: START + 1000 })))).toBe('applied');
    // refunds/create first, then the order's own figures say the same refund.
    expect(statusOf(await shop('refunds/create', shopifyRefund({ id: 880_001, orderId: id, subtotal: 3000, createdAt: START + 2000 })))).toBe('applied');
    expect(await order(id)).toMatchObject({ total_refunded: 30, points_reversed: 30 });
    const refunded = shopifyOrder({
      id,
      customer: grace,
      subtotal: 10_000,
      currentSubtotal: 7000,
      financialStatus: 'partially_refunded',
      updatedAt: START + 3000,
    });
    expect(statusOf(await shop('orders/updated', refunded))).toBe('applied');
    expect(await order(id)).toMatchObject({ total_refunded: 30, points_reversed: 30, financial_status: 'partially_refunded' });
    // The same refund id in another event: still once.
    expect(statusOf(await shop('refunds/create', shopifyRefund({ id: 880_001, orderId: id, subtotal: 3000, createdAt: START + 2000 })))).toBe('applied');
    expect(await customer(grace.id)).toMatchObject({ points_balance: 70 });

    // A refund before its order: deferred, then applied when the order arrives.
    const late = 5_500_000_000_011;
    expect(statusOf(await shop('refunds/create', shopifyRefund({ id: 880_002, orderId: late, subtotal: 2500, createdAt: START + 2000 })))).toBe('deferred');
    expect((await deliveries(shopify, { status: 'deferred' })).map((d: { resource_id: number }) => d.resource_id)).toEqual([late]);
    expect(statusOf(await shop('orders/paid', shopifyOrder({ id: late, customer: grace, subtotal: 10_000, updatedAt: START + 1000 })))).toBe('applied');
    expect(await order(late)).toMatchObject({ points_earned: 100, total_refunded: 25, points_reversed: 25 });
    expect(await deliveries(shopify, { status: 'deferred' })).toEqual([]);
    expect(await customer(grace.id)).toMatchObject({ points_balance: 70 + 75 });
    await expectConsistentLedger(t);
  });

  it('grants once when 10 copies of one event arrive at once on two processes', async () => {
    const alan = { id: 7_100_000_000_003, email: 'alan@example.com', updatedAt: START };
    const payload = shopifyOrder({ id: 5_500_000_000_020, customer: alan, subtotal: 4200, updatedAt: START + 1000 });
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => shop('orders/paid', payload, 'evt-race', i % 2 === 0 ? t.app : second.app)));
    const statuses = answers.map((a) => statusOf(a)).sort();
    expect(statuses).toEqual(['applied', ...Array(9).fill('duplicate')]);
    expect(await customer(alan.id)).toMatchObject({ points_balance: 42, points_earned_lifetime: 42 });
    expect(await deliveries(shopify, { topic: 'orders/paid' })).toHaveLength(
      (await deliveries(shopify, { topic: 'orders/paid' })).filter((d: { dedupe_key: string }) => d.dedupe_key !== 'evt-race').length + 1,
    );
    await expectConsistentLedger(t);
  });

  it('applies a large order near 2 MB, and refuses a body over the limit', async () => {
    const big = shopifyOrder({ id: 5_500_000_000_030, customer: null, subtotal: 99_900, updatedAt: START, lines: 2050 });
    const text = JSON.stringify(big);
    expect(text.length).toBeGreaterThan(1_700_000);
    expect(text.length).toBeLessThan(2 * 1024 * 1024);
    expect(statusOf(await send(`shopify/${shopify}`, shopifyHeaders('orders/create', text, SECRET), text))).toBe('applied');
    const huge = JSON.stringify(shopifyOrder({ id: 5_500_000_000_031, customer: null, subtotal: 100, updatedAt: START, lines: 2500 }));
    const refused = await send(`shopify/${shopify}`, shopifyHeaders('orders/create', huge, SECRET), huge);
    expect(refused.statusCode).toBe(413);
  });

  it('keeps a payload that can never apply as failed (200), and a replay applies it once the cause is fixed', async () => {
    const notJson = '{"id": 12, oops';
    expect(statusOf(await send(`shopify/${shopify}`, shopifyHeaders('orders/paid', notJson, SECRET), notJson))).toBe('failed');
    // Another customer holds the e-mail: the API refuses, the delivery is kept with the reason.
    expect((await t.request('PUT', `${API}/customers/42`, { body: { email: 'taken@example.com' } })).statusCode).toBe(201);
    const clash = shopifyCustomer({ id: 7_100_000_000_004, email: 'taken@example.com', updatedAt: START });
    expect(statusOf(await shop('customers/create', clash))).toBe('failed');
    const failed = await deliveries(shopify, { status: 'failed' });
    expect(failed.map((d: { topic: string }) => d.topic)).toEqual(['orders/paid', 'customers/create']);
    expect(failed[1]).toMatchObject({ body_kept: true, resource: null });
    expect(failed[1].error).toContain('email');
    expect((await t.request('GET', `${API}/customers/7100000000004`)).statusCode).toBe(404);
    expect((await t.request('PUT', `${API}/customers/42`, { body: { email: 'someone-else@example.com' } })).statusCode).toBe(200);
    const replay = await t.request('POST', `${API}/connections/${shopify}/deliveries/${failed[1].id}/replay`);
    expect(replay.statusCode, replay.body).toBe(200);
    expect(replay.json().data).toMatchObject({ status: 'applied', error: null, resource: 'customer', resource_id: 7_100_000_000_004 });
    expect(replay.json().data.replayed_at).not.toBeNull();
    expect(await customer(7_100_000_000_004)).toMatchObject({ email: 'taken@example.com' });
    // A replay of what can never apply stays failed.
    const again = await t.request('POST', `${API}/connections/${shopify}/deliveries/${failed[0].id}/replay`);
    expect(again.json().data).toMatchObject({ status: 'failed' });
    const audit = (await t.request('GET', `${API}/audit_events`, { query: { resource: 'connection_delivery' } })).json().data;
    expect(audit.map((a: { action: string }) => a.action)).toEqual(['connection_delivery.replayed', 'connection_delivery.replayed']);
    await expectConsistentLedger(t);
  });

  it('lists deliveries in both pagination modes, filtered, and prunes kept bodies after the retention', async () => {
    const all = await deliveries(shopify);
    expect(all.length).toBeGreaterThan(10);
    const first = (await t.request('GET', `${API}/connections/${shopify}/deliveries`, { query: { 'pagination[limit]': '3' } })).json();
    expect(first.data.map((d: { id: number }) => d.id)).toEqual(all.slice(0, 3).map((d: { id: number }) => d.id));
    const page = (
      await t.request('GET', `${API}/connections/${shopify}/deliveries`, { query: { 'pagination[per_page]': '3', 'pagination[page]': '2' } })
    ).json();
    expect(page.data.map((d: { id: number }) => d.id)).toEqual(all.slice(3, 6).map((d: { id: number }) => d.id));
    expect(page.links.next).toContain('pagination[page]=3');
    const bad = await t.request('GET', `${API}/connections/${shopify}/deliveries`, { query: { status: 'duplicate' } });
    expect(errorOf(bad)).toMatchObject({ code: 'invalid_parameter' });
    t.clock.advance(31 * DAY);
    expect(await pruneBodies(t.database.db, t.clock.now - 30 * DAY)).toBeGreaterThan(0);
    expect((await deliveries(shopify)).every((d: { body_kept: boolean }) => !d.body_kept)).toBe(true);
    const gone = await t.request('POST', `${API}/connections/${shopify}/deliveries/${all[0].id}/replay`);
    expect(errorOf(gone)).toMatchObject({ code: 'validation_failed' });
  });

  it('writes WooCommerce customers and orders, answers its ping, and voids a deleted order', async () => {
    const ping = await t.app.inject({
      method: 'POST',
      url: `/ingest/v1/woocommerce/${woo}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `webhook_id=7`,
    });
    expect(statusOf(ping)).toBe('ignored');
    const now = t.clock.now;
    const gmt = new Date(now).toISOString().slice(0, 19);
    expect(statusOf(await wc('customer.created', { id: 301, email: 'lin@example.com', first_name: 'Lin', last_name: 'Wu', date_modified_gmt: gmt }))).toBe(
      'applied',
    );
    const paid = wooOrder({ id: 9101, customerId: 301, email: 'lin@example.com', total: 8000, status: 'processing', modifiedAt: now + 1000 });
    expect(statusOf(await wc('order.created', paid))).toBe('applied');
    expect(statusOf(await wc('order.created', paid))).toBe('duplicate');
    expect(await order(9101)).toMatchObject({ total: 80, financial_status: 'paid', points_earned: 80 });
    const refunded = wooOrder({
      id: 9101,
      customerId: 301,
      email: 'lin@example.com',
      total: 8000,
      status: 'completed',
      modifiedAt: now + 2000,
      refunds: [2950],
    });
    expect(statusOf(await wc('order.updated', refunded))).toBe('applied');
    // 29.50 of 93.00 refunded, in proportion to the subtotal of 80.00: 25.38.
    expect(await order(9101)).toMatchObject({ financial_status: 'partially_refunded', total_refunded: 25.38 });
    const guest = wooOrder({ id: 9102, customerId: 0, email: 'anon@example.com', total: 1000, status: 'completed', modifiedAt: now });
    expect(statusOf(await wc('order.created', guest))).toBe('applied');
    expect(await order(9102)).toMatchObject({ customer_remote_id: null });
    expect(statusOf(await wc('order.deleted', { id: 9101 }))).toBe('applied');
    expect(await order(9101)).toMatchObject({ financial_status: 'voided' });
    // As PUT /orders with voided does: what the paid order earned, less the refund's share, stays.
    expect(await customer(301)).toMatchObject({ email: 'lin@example.com', points_balance: 80 - 25 });
    await expectConsistentLedger(t);
  });

  it("fills a demo connection's log with signed sample deliveries (loyalty connections demo)", async () => {
    const sent = await sendSampleDeliveries(t.database.db, t.config, t.shop, t.clock.now);
    expect(sent.ingest_url).toBe(`https://loyalty.example.com/ingest/v1/shopify/${sent.connection_id}`);
    expect(sent.deliveries.map((d) => d.status)).toEqual(['applied', 'duplicate', 'stale', 'deferred', 'applied', 'failed', 'ignored']);
    const log = await deliveries(sent.connection_id);
    expect(log.map((d: { status: string }) => d.status)).toEqual(['applied', 'stale', 'applied', 'applied', 'failed', 'ignored']);
    await expectConsistentLedger(t);
  });

  it('erases a customer on customers/redact, with the bodies that named them, and stops at app/uninstalled', async () => {
    const id = 7_100_000_000_001;
    const redact = {
      shop_id: 954889,
      shop_domain: 'example.myshopify.com',
      customer: { id, email: 'ada@example.com', phone: null },
      orders_to_redact: [5_500_000_000_001],
    };
    expect(statusOf(await shop('customers/redact', redact))).toBe('applied');
    expect((await t.request('GET', `${API}/customers/${id}`)).statusCode).toBe(404);
    const named = (await t.database.db.selectFrom('connection_deliveries').select('id').where('customer_remote_id', '=', id).execute()).map((r) =>
      Number(r.id),
    );
    expect(named.length).toBeGreaterThan(2);
    const listed = (await deliveries(shopify)).filter((d: { id: number }) => named.includes(d.id));
    expect(listed.map((d: { body_kept: boolean }) => d.body_kept)).toEqual(named.map(() => false));
    const kept = await t.database.db.selectFrom('connection_delivery_bodies').select('delivery_id').where('delivery_id', 'in', named).execute();
    expect(kept).toEqual([]);
    expect(statusOf(await shop('customers/data_request', { shop_id: 954889, customer: { id: 7_100_000_000_002 } }))).toBe('ignored');
    expect(statusOf(await shop('app/uninstalled', { id: 954889, name: 'Example', domain: 'example.myshopify.com' }))).toBe('applied');
    expect((await t.request('GET', `${API}/connections/${shopify}`)).json().data).toMatchObject({ status: 'uninstalled' });
    const after = await shop('orders/paid', shopifyOrder({ id: 5_500_000_000_099, customer: null, subtotal: 100, updatedAt: START }));
    expect(after.statusCode).toBe(410);
    expect(errorOf(after)).toMatchObject({ code: 'connection_uninstalled' });
    await expectConsistentLedger(t);
  });
});
