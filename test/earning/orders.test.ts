import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releasePendingPoints } from '../../src/earning/jobs.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postEvent } from '../ledger/fixtures.js';

// Orders drive the ledger by the shop's order rule (docs/earning.md, "Orders"), over HTTP.
// The `it` blocks share one shop and one clock, in order; each uses customers of its own.

const START = Date.UTC(2026, 2, 1, 12);
const at = (days: number) => new Date(START + days * DAY).toISOString();

describe(`orders earn and refunds take back (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: START });
    await createCustomers(t, 10);
    const rule = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1, currency: 'EUR' } });
    expect(rule.statusCode, rule.body).toBe(201);
  });
  afterAll(() => t.close());

  const putOrder = async (id: number, customer: number | null, fields: Record<string, unknown>) => {
    const res = await t.request('PUT', `${API}/orders/${id}`, {
      body: { customer_remote_id: customer, total: 100, currency: 'EUR', placed_at: new Date(t.clock.now).toISOString(), ...fields },
    });
    expect([200, 201], res.body).toContain(res.statusCode);
    return res.json().data;
  };
  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const orderEvents = async (id: number) => (await t.request('GET', `${API}/orders/${id}/points_events`, { query: { 'pagination[limit]': '50' } })).json().data;

  it('earns once when paid, and takes back cumulatively on each refund, until the customer is where they started', async () => {
    expect(await putOrder(1, 1, { financial_status: 'pending' })).toMatchObject({ points_earned: 0 });
    expect(await customer(1)).toMatchObject({ points_balance: 0 });
    expect(await putOrder(1, 1, { financial_status: 'paid' })).toMatchObject({
      points_earned: 100,
      points_reversed: 0,
      points_unrecovered: 0,
      total_refunded: 0,
    });
    expect(await customer(1)).toMatchObject({ points_balance: 100, points_earned_lifetime: 100 });
    expect(await putOrder(1, 1, { financial_status: 'partially_refunded', total_refunded: 30 })).toMatchObject({ points_reversed: 30 });
    expect(await customer(1)).toMatchObject({ points_balance: 70 });
    expect(await putOrder(1, 1, { financial_status: 'partially_refunded', total_refunded: 100 })).toMatchObject({ points_reversed: 100 });
    expect(await putOrder(1, 1, { financial_status: 'refunded', total_refunded: 100 })).toMatchObject({
      points_earned: 100,
      points_reversed: 100,
      points_unrecovered: 0,
    });
    expect(await customer(1)).toMatchObject({ points_balance: 0, points_earned_lifetime: 0, points_spent_lifetime: 0 });
    const events = await orderEvents(1);
    expect(events.map((e: { source: string; points_amount: number }) => [e.source, e.points_amount])).toEqual([
      ['order', 100],
      ['refund', -30],
      ['refund', -70],
    ]);
    const rule = (await t.request('GET', `${API}/earning_rules`)).json().data[0];
    for (const e of events) expect(e).toMatchObject({ order_remote_id: 1, earning_rule_id: rule.id, customer: { remote_id: 1 } });
    // An order's events follow the order: they are not reversed on their own.
    const reverse = await t.request('POST', `${API}/points_events/${events[0].id}/reverse`);
    expect(errorOf(reverse)).toMatchObject({ code: 'not_reversible' });
  });

  it('takes back no more than the customer still has, and shows the rest as unrecovered', async () => {
    await putOrder(2, 2, { financial_status: 'paid', total: 200 });
    expect((await postEvent(t, { customer_identifier: '2', source: 'manual', points_amount: -150 })).statusCode).toBe(201);
    const order = await putOrder(2, 2, { financial_status: 'refunded', total: 200, total_refunded: 200 });
    expect(order).toMatchObject({ points_earned: 200, points_reversed: 50, points_unrecovered: 150 });
    expect(await customer(2)).toMatchObject({ points_balance: 0, points_earned_lifetime: 150, points_spent_lifetime: 150 });
    // Sent again, it changes nothing.
    expect(await putOrder(2, 2, { financial_status: 'refunded', total: 200, total_refunded: 200 })).toMatchObject({
      points_reversed: 50,
      points_unrecovered: 150,
    });
    expect(await orderEvents(2)).toHaveLength(2);
  });

  it('changes nothing twice, whatever the order of arrival', async () => {
    await putOrder(3, 3, { financial_status: 'paid' });
    await putOrder(3, 3, { financial_status: 'paid' });
    expect(await customer(3)).toMatchObject({ points_balance: 100 });
    expect(await orderEvents(3)).toHaveLength(1);
    // refunded before paid: it earns nothing, and the late paid does not either.
    await putOrder(4, 4, { financial_status: 'refunded', total_refunded: 100 });
    await putOrder(4, 4, { financial_status: 'paid' });
    expect(await customer(4)).toMatchObject({ points_balance: 0 });
    expect(await orderEvents(4)).toEqual([]);
    // partially_refunded before paid: it earns and takes back its share; the late paid gives nothing back.
    await putOrder(5, 5, { financial_status: 'partially_refunded', total_refunded: 25 });
    await putOrder(5, 5, { financial_status: 'paid' });
    expect(await customer(5)).toMatchObject({ points_balance: 75 });
    expect((await orderEvents(5)).map((e: { points_amount: number }) => e.points_amount)).toEqual([100, -25]);
    // voided before paid: nothing.
    await putOrder(6, 6, { financial_status: 'voided' });
    expect(await orderEvents(6)).toEqual([]);
  });

  it('earns once when ten PUTs of a new paid order race', async () => {
    const body = { customer_remote_id: 10, total: 100, currency: 'EUR', financial_status: 'paid', placed_at: new Date(t.clock.now).toISOString() };
    const responses = await Promise.all(Array.from({ length: 10 }, () => t.request('PUT', `${API}/orders/30`, { body })));
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(await orderEvents(30)).toHaveLength(1);
    expect(await customer(10)).toMatchObject({ points_balance: 100 });
  });

  it('earns when the customer is synced after the order, and never for a guest', async () => {
    await putOrder(7, 70, { financial_status: 'paid', total: 40 });
    expect((await t.request('GET', `${API}/customers/70`)).statusCode).toBe(404);
    await createCustomers(t, 1, 70);
    expect(await customer(70)).toMatchObject({ points_balance: 40 });
    expect(await putOrder(8, null, { financial_status: 'paid' })).toMatchObject({ points_earned: 0 });
  });

  it('follows the rule: currency, minimum, and rounding down', async () => {
    const rule = (await t.request('GET', `${API}/earning_rules`)).json().data[0];
    expect(
      (await t.request('PATCH', `${API}/earning_rules/${rule.id}`, { body: { points_per_unit: 3, unit_amount: 2, min_order_total: 20 } })).statusCode,
    ).toBe(200);
    expect(await putOrder(9, 9, { financial_status: 'paid', total: 59.99 })).toMatchObject({ points_earned: 87 });
    expect(await putOrder(10, 9, { financial_status: 'paid', total: 19.99 })).toMatchObject({ points_earned: 0 });
    expect(await putOrder(11, 9, { financial_status: 'paid', total: 500, currency: 'USD' })).toMatchObject({ points_earned: 0 });
    const preview = await t.request('POST', `${API}/earning_rules/preview`, {
      body: { customer_identifier: 'customer9@example.com', total: 59.99, currency: 'EUR' },
    });
    expect(preview.json().data).toEqual({ points: 87, credits: 0, earning_rule_id: rule.id, multiplier: 1, campaign_id: null, pending: false });
    expect(await customer(9)).toMatchObject({ points_balance: 87 });
    const unknown = await t.request('POST', `${API}/earning_rules/preview`, { body: { customer_identifier: 'nobody@example.com', total: 1, currency: 'EUR' } });
    expect(errorOf(unknown).details).toEqual([expect.objectContaining({ param: 'customer_identifier', code: 'customer_not_found' })]);
    // A preview writes nothing: an Idempotency-Key, even one a write used, changes nothing.
    const key = { 'idempotency-key': 'order-9-preview' };
    expect((await t.request('PUT', `${API}/customers/9`, { body: { email: 'customer9@example.com' }, headers: key })).statusCode).toBe(200);
    const keyed = await t.request('POST', `${API}/earning_rules/preview`, { body: { customer_identifier: '9', total: 59.99, currency: 'EUR' }, headers: key });
    expect([keyed.statusCode, keyed.headers['idempotent-replayed'], keyed.json().data.points]).toEqual([200, undefined, 87]);
    expect(
      (await t.request('PATCH', `${API}/earning_rules/${rule.id}`, { body: { points_per_unit: 1, unit_amount: 1, min_order_total: null } })).statusCode,
    ).toBe(200);
  });

  it('keeps points pending until points_pending_days after placed_at: not spendable, released on the day, cancelled by a refund before it', async () => {
    expect((await t.request('PATCH', `${API}/shop`, { body: { points_pending_days: 14 } })).statusCode).toBe(200);
    const order = await putOrder(20, 8, { financial_status: 'paid', total: 50 });
    expect(order).toMatchObject({ points_earned: 50, points_pending: 50, pending_release_at: new Date(t.clock.now + 14 * DAY).toISOString() });
    expect(await customer(8)).toMatchObject({ points_balance: 0, points_pending: 50 });
    expect(errorOf(await postEvent(t, { customer_identifier: '8', source: 'manual', points_amount: -10 })).code).toBe('validation_failed');

    await putOrder(21, 8, { financial_status: 'paid', total: 80 });
    expect(await customer(8)).toMatchObject({ points_pending: 130 });
    expect(await putOrder(21, 8, { financial_status: 'partially_refunded', total: 80, total_refunded: 40 })).toMatchObject({
      points_pending: 40,
      points_reversed: 40,
    });
    expect(await putOrder(21, 8, { financial_status: 'refunded', total: 80, total_refunded: 80 })).toMatchObject({
      points_pending: 0,
      points_reversed: 80,
      pending_release_at: null,
    });
    expect(await customer(8)).toMatchObject({ points_balance: 0, points_pending: 50 });
    expect(await orderEvents(21)).toEqual([]);

    t.clock.advance(13 * DAY);
    expect(await releasePendingPoints(t.database.db, t.clock.now)).toBe(0);
    t.clock.advance(DAY);
    expect(await releasePendingPoints(t.database.db, t.clock.now)).toBe(1);
    expect(await releasePendingPoints(t.database.db, t.clock.now)).toBe(0);
    expect(await customer(8)).toMatchObject({ points_balance: 50, points_pending: 0, points_earned_lifetime: 50 });
    expect(await orderEvents(20)).toEqual([expect.objectContaining({ source: 'order', points_amount: 50, applied_at: at(14) })]);
    expect((await postEvent(t, { customer_identifier: '8', source: 'manual', points_amount: -10 })).statusCode).toBe(201);
    expect((await t.request('PATCH', `${API}/shop`, { body: { points_pending_days: 0 } })).statusCode).toBe(200);
  });

  it("refuses a total_refunded above total, with the body's other errors, and stores nothing", async () => {
    const body = {
      customer_remote_id: 9,
      total: 50,
      currency: 'EUR',
      placed_at: new Date(t.clock.now).toISOString(),
      financial_status: 'refunded',
      total_refunded: 50.01,
    };
    const over = await t.request('PUT', `${API}/orders/931`, { body });
    expect(over.statusCode, over.body).toBe(422);
    expect(errorOf(over).details).toEqual([{ param: 'total_refunded', code: 'exceeds_total', message: 'total_refunded must not be more than total' }]);
    const both = await t.request('PUT', `${API}/orders/931`, { body: { ...body, currency: 'euro' } });
    expect(errorOf(both).details!.map((d) => d.param)).toEqual(['currency', 'total_refunded']);
    expect((await t.request('GET', `${API}/orders/931`)).statusCode).toBe(404);
    expect(await putOrder(931, 9, { financial_status: 'refunded', total: 50, total_refunded: 50 })).toMatchObject({ total_refunded: 50 });
  });

  it('allows one enabled rule per kind', async () => {
    const second = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 2, unit_amount: 1 } });
    expect(second.statusCode).toBe(422);
    expect(errorOf(second).details).toEqual([expect.objectContaining({ param: 'kind', code: 'rule_kind_taken' })]);
    const disabled = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 2, unit_amount: 1, enabled: false } });
    expect(disabled.statusCode).toBe(201);
    const enable = await t.request('PATCH', `${API}/earning_rules/${disabled.json().data.id}`, { body: { enabled: true } });
    expect(errorOf(enable).details).toEqual([expect.objectContaining({ code: 'rule_kind_taken' })]);
    const wrong = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'signup', points_per_unit: 2 } });
    expect(errorOf(wrong).details!.map((d) => [d.param, d.code])).toEqual([
      ['points_per_unit', 'not_applicable'],
      ['points_amount', 'missing'],
    ]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
