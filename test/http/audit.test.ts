import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAuditLog } from '../../src/shops/audit.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// The audit log (docs/access.md): one entry per write request, in the
// write's transaction; none for a failed write or a replay; one for a batch; no secrets; its
// list with filters in both pagination modes; retention.

interface AuditEvent {
  id: number;
  occurred_at: string;
  actor: { type: string; token_id: number | null; name: string | null };
  action: string;
  resource: string;
  resource_id: string | null;
  changes: Record<string, [unknown, unknown]>;
  request_id: string | null;
}

describe(`the audit log (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  const all = async (query: Record<string, string> = {}): Promise<AuditEvent[]> => {
    const res = await t.request('GET', `${API}/audit_events`, { query: { 'pagination[limit]': '250', ...query } });
    expect(res.statusCode).toBe(200);
    return res.json().data;
  };

  it('records who changed which fields of a record, with the request id, and only the fields that changed', async () => {
    const created = await t.request('POST', `${API}/rewards`, { body: { name: 'Tote', points_price: 100, kind: 'free_product', value: 10 } });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id;
    const patched = await t.request('PATCH', `${API}/rewards/${id}`, { body: { points_price: 150, name: 'Tote' } });
    expect(patched.statusCode).toBe(200);
    const [create, update] = await all({ resource: 'reward', resource_id: String(id) });
    expect(create).toMatchObject({ action: 'reward.created', resource: 'reward', resource_id: String(id), request_id: created.headers['x-request-id'] });
    expect(create!.changes.points_price).toEqual([null, 100]);
    expect(update).toMatchObject({ action: 'reward.updated', actor: { type: 'token', name: 'test' }, request_id: patched.headers['x-request-id'] });
    expect(update!.actor.token_id).toEqual(expect.any(Number));
    expect(update!.changes).toEqual({ points_price: [100, 150] });
  });

  it('adds no entry for a failed write, nor for a replay', async () => {
    const before = (await all()).length;
    const failed = await t.request('POST', `${API}/rewards`, { body: { name: '', points_price: -1, kind: 'free_product' } });
    expect(failed.statusCode).toBe(422);
    const deduction = await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1', source: 'manual', points_amount: -5 } });
    expect(deduction.statusCode).toBeGreaterThanOrEqual(400);
    expect((await all()).length).toBe(before);
    await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } });
    const headers = { 'idempotency-key': 'grant-1' };
    const body = { customer_identifier: '1', source: 'manual', points_amount: 50 };
    const first = await t.request('POST', `${API}/points_events`, { body, headers });
    const replay = await t.request('POST', `${API}/points_events`, { body, headers });
    expect(first.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    const entries = await all({ resource: 'points_event' });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ action: 'points_event.created', resource_id: String(first.json().data.id) });
    expect(entries[0]!.changes.points_amount).toEqual([null, 50]);
    expect((await all()).length).toBe(before + 2);
  });

  it('writes one entry for a batch, naming its events ids range', async () => {
    const res = await t.request('POST', `${API}/points_events/batch`, {
      body: { points_events: [1, 2, 3].map((n) => ({ customer_identifier: '1', source: 'manual', points_amount: n })) },
    });
    expect(res.statusCode).toBe(201);
    const ids = res.json().data.map((e: { id: number }) => e.id);
    const entries = (await all({ resource: 'points_event' })).filter((e) => e.action === 'points_event.batch_created');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ resource_id: `${ids[0]}..${ids[2]}`, changes: { points_events: [null, 3] } });
  });

  it('never writes a secret: tokens, webhook and storefront key secrets, codes', async () => {
    const secrets: string[] = [];
    const token = await t.request('POST', `${API}/api_tokens`, { body: { name: 'analytics', scopes: ['read'] } });
    expect(token.statusCode).toBe(201);
    secrets.push(token.json().data.token);
    const webhook = await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url: 'https://example.com/hook' } });
    expect(webhook.statusCode).toBe(201);
    secrets.push(...Object.values(webhook.json().data as Record<string, unknown>).filter((v): v is string => typeof v === 'string' && v.startsWith('whsec')));
    const key = await t.request('POST', `${API}/storefront_keys`, { body: { allowed_origins: ['https://shop.example.com'] } });
    expect(key.statusCode).toBe(201);
    secrets.push(key.json().data.secret);
    await t.request('PATCH', `${API}/storefront_keys/${key.json().data.id}`, { body: { allowed_origins: ['https://shop.example.org'] } });
    const minted = await t.request('POST', `${API}/customers/1/storefront_tokens`, { body: {} });
    expect(minted.statusCode).toBe(201);
    secrets.push(minted.json().data.token);
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Coupon', points_price: 10, kind: 'free_shipping' } })).json().data;
    const codes = await t.request('POST', `${API}/rewards/${reward.id}/codes`, { body: { codes: ['SECRET-CODE-1', 'SECRET-CODE-2'] } });
    expect(codes.statusCode).toBe(201);
    secrets.push('SECRET-CODE-1', 'SECRET-CODE-2');
    const redemption = await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '1' } });
    expect(redemption.statusCode).toBe(201);
    secrets.push(redemption.json().data.code);
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    const text = JSON.stringify(await all());
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
  });

  it('filters by actor token and time, in both pagination modes', async () => {
    const scoped = (await t.request('POST', `${API}/api_tokens`, { body: { name: 'shop editor', scopes: ['shop:write'] } })).json().data;
    t.clock.advance(60_000);
    const since = new Date(t.clock.now).toISOString();
    expect((await t.request('PATCH', `${API}/shop`, { token: scoped.token, body: { name: 'Renamed' } })).statusCode).toBe(200);
    const mine = await all({ actor_token_id: String(scoped.id) });
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      action: 'shop.updated',
      actor: { type: 'token', token_id: scoped.id, name: 'shop editor' },
      changes: { name: ['Test shop', 'Renamed'] },
    });
    expect(await all({ 'occurred_at[gte]': since })).toHaveLength(1);
    expect((await all({ 'occurred_at[lt]': since })).length).toBe((await all()).length - 1);
    const everything = await all();
    const page = (await t.request('GET', `${API}/audit_events`, { query: { 'pagination[per_page]': '2', 'sort[order_direction]': 'desc' } })).json();
    expect(page.data.map((e: AuditEvent) => e.id)).toEqual(
      everything
        .slice(-2)
        .reverse()
        .map((e) => e.id),
    );
    expect(page.links.next).toContain('pagination[page]=2');
    const cursor = (await t.request('GET', `${API}/audit_events`, { query: { 'pagination[limit]': '2' } })).json();
    expect(cursor.links.next_since_id).toBe(everything[1]!.id);
    const bad = await t.request('GET', `${API}/audit_events`, { query: { 'occurred_at[gte]': 'yesterday' } });
    expect(bad.statusCode).toBe(400);
  });

  it('records every field an action changed, not its status alone', async () => {
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Mug', points_price: 5, kind: 'free_product', value: 5 } })).json().data;
    await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1', source: 'manual', points_amount: 20 } });
    const redeem = async () => (await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '1' } })).json().data;
    const [used, voided] = [await redeem(), await redeem()];
    expect((await t.request('POST', `${API}/redemptions/${used.id}/use`)).statusCode).toBe(200);
    const after = (await t.request('POST', `${API}/redemptions/${voided.id}/void`)).json().data;
    const [use] = (await all({ resource: 'redemption', resource_id: String(used.id) })).filter((e) => e.action === 'redemption.used');
    expect(use!.changes).toEqual({ status: ['issued', 'used'], used_at: [null, expect.any(String)] });
    const [entry] = (await all({ resource: 'redemption', resource_id: String(voided.id) })).filter((e) => e.action === 'redemption.voided');
    expect(entry!.changes).toMatchObject({ status: ['issued', 'voided'], voided_at: [null, after.voided_at] });
    // What the action wrote besides its status: the reversal event that gave the points back.
    expect(Object.keys(entry!.changes).length).toBeGreaterThan(2);
  });

  it('keeps entries AUDIT_RETENTION_DAYS, pruned in bounded batches', async () => {
    const count = (await all()).length;
    t.clock.advance(DAY);
    await t.request('PATCH', `${API}/shop`, { body: { name: 'Later' } });
    const deleted = await pruneAuditLog(t.database.db, t.clock.now - DAY / 2, 2, 1000);
    expect(deleted).toBe(count);
    const left = await all();
    expect(left.map((e) => e.action)).toEqual(['shop.updated']);
  });
});
