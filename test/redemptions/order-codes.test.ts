import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';
import { createWebhook, grant, storedDeliveries } from '../webhooks/fixtures.js';

// Refunds give redeemed points back (docs/earning.md, "Orders"): an order's discount_codes
// mark the redemption whose code it used `used`; when the order is refunded, voided or
// cancelled, the redemption is voided and its points return, once. The `it` blocks share one
// shop, in order.

describe(`orders' discount codes and redemptions (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let reward: number;
  beforeAll(async () => {
    t = await setup();
    expect((await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } })).statusCode).toBe(201);
    expect((await t.request('POST', `${API}/points_events`, { body: grant(1, 1000) })).statusCode).toBe(201);
    const res = await t.request('POST', `${API}/rewards`, { body: { name: '5 € off', kind: 'fixed_amount_discount', value: 5, points_price: 100 } });
    expect(res.statusCode, res.body).toBe(201);
    reward = res.json().data.id;
    await createWebhook(t, 'redemption.voided');
  });
  afterAll(() => t.close());

  const balance = async () => (await t.request('GET', `${API}/customers/1`)).json().data.points_balance as number;
  const redeem = async () => {
    const res = await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward, customer_identifier: '1' } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: number; code: string };
  };
  const redemption = async (id: number) => (await t.request('GET', `${API}/redemptions/${id}`)).json().data;
  const order = async (id: number, status: string, codes?: string[], headers?: Record<string, string>) => {
    const body = {
      customer_remote_id: 1,
      total: 50,
      currency: 'EUR',
      financial_status: status,
      total_refunded: status === 'refunded' ? 50 : 0,
      placed_at: '2026-01-15T10:00:00Z',
      ...(codes === undefined ? {} : { discount_codes: codes }),
    };
    const res = await t.request('PUT', `${API}/orders/${id}`, { body, ...(headers ? { headers } : {}) });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res;
  };
  const voidedWebhooks = async () => (await storedDeliveries(t)).filter((d) => d.topic === 'redemption.voided').map((d) => d.body.data.id as number);

  it('marks the redemption whose code an order used, keeps unknown codes, and refuses bad lists', async () => {
    const r = await redeem();
    expect(await balance()).toBe(900);
    const res = await order(1, 'paid', [r.code, 'NOT-OURS']);
    expect(res.json().data.discount_codes).toEqual([r.code, 'NOT-OURS']);
    expect(await redemption(r.id)).toMatchObject({ status: 'used', order_remote_id: 1 });
    // Re-sent as it was: nothing changes; an order without codes shows [].
    await order(1, 'paid', [r.code, 'NOT-OURS']);
    expect(await redemption(r.id)).toMatchObject({ status: 'used', order_remote_id: 1 });
    expect((await order(99, 'paid')).json().data.discount_codes).toEqual([]);
    const bad = await t.request('PUT', `${API}/orders/98`, {
      body: { customer_remote_id: 1, total: 5, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-15T10:00:00Z', discount_codes: ['', 7] },
    });
    expect(bad.statusCode).toBe(422);
    expect(errorOf(bad).details!.every((d) => d.param.startsWith('discount_codes'))).toBe(true);
    // A used redemption cannot be voided by the merchant: only by its order.
    expect(errorOf(await t.request('POST', `${API}/redemptions/${r.id}/void`)).code).toBe('redemption_not_voidable');
  });

  it('gives the points back once when the order is refunded, however often it is re-sent', async () => {
    const [used] = (await t.request('GET', `${API}/redemptions`)).json().data as { id: number }[];
    const key = { 'Idempotency-Key': 'refund-1' };
    const first = await order(1, 'refunded', undefined, key);
    expect(await balance()).toBe(1000);
    const voided = await redemption(used!.id);
    expect(voided).toMatchObject({ status: 'voided', order_remote_id: 1 });
    expect(voided.void_event_id).toEqual(expect.any(Number));
    // The same request replayed, the order re-sent, then cancelled: nothing more.
    const replay = await order(1, 'refunded', undefined, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    await order(1, 'refunded');
    await order(1, 'cancelled');
    expect(await balance()).toBe(1000);
    expect(await voidedWebhooks()).toEqual([used!.id]);
    const reversals = (await t.request('GET', `${API}/customers/1/points_events`, { query: { 'pagination[limit]': '50' } }))
      .json()
      .data.filter((e: { source: string }) => e.source === 'reversal');
    expect(reversals).toHaveLength(1);
  });

  it('gives them back when the order is voided, or cancelled', async () => {
    const a = await redeem();
    const b = await redeem();
    await order(2, 'paid', [a.code]);
    await order(3, 'authorized', [b.code]);
    expect(await balance()).toBe(800);
    await order(2, 'voided', [a.code]);
    expect(await balance()).toBe(900);
    await order(3, 'cancelled', [b.code]);
    expect(await balance()).toBe(1000);
    expect(await redemption(a.id)).toMatchObject({ status: 'voided', order_remote_id: 2 });
    expect(await redemption(b.id)).toMatchObject({ status: 'voided', order_remote_id: 3 });
  });

  it('does nothing more for an order whose code was already voided', async () => {
    const r = await redeem();
    expect((await t.request('POST', `${API}/redemptions/${r.id}/void`)).statusCode).toBe(200);
    expect(await balance()).toBe(1000);
    await order(4, 'paid', [r.code]);
    expect(await redemption(r.id)).toMatchObject({ status: 'voided', order_remote_id: null });
    await order(4, 'refunded', [r.code]);
    expect(await balance()).toBe(1000);
    expect((await voidedWebhooks()).filter((id) => id === r.id)).toHaveLength(1);
  });

  it('an order first seen refunded leaves its code issued', async () => {
    const r = await redeem();
    await order(5, 'refunded', [r.code]);
    expect(await redemption(r.id)).toMatchObject({ status: 'issued', order_remote_id: null });
    expect(await balance()).toBe(900);
    expect((await t.request('POST', `${API}/redemptions/${r.id}/void`)).statusCode).toBe(200);
  });

  it('keeps the points spent when restore_redeemed_points_on_refund is off', async () => {
    const shop = await t.request('PATCH', `${API}/shop`, { body: { restore_redeemed_points_on_refund: false } });
    expect(shop.json().data.restore_redeemed_points_on_refund).toBe(false);
    const r = await redeem();
    await order(6, 'paid', [r.code]);
    await order(6, 'refunded', [r.code]);
    expect(await redemption(r.id)).toMatchObject({ status: 'used', order_remote_id: 6 });
    expect(await balance()).toBe(900);
    await t.request('PATCH', `${API}/shop`, { body: { restore_redeemed_points_on_refund: true } });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
