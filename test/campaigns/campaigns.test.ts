import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { announceCampaigns, releasePendingPoints } from '../../src/earning/jobs.js';
import { recordsJson } from '../../src/records/resource.js';
import { campaigns } from '../../src/records/resources/campaigns.js';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, loyalty, postEvent } from '../ledger/fixtures.js';
import { runJob, storedDeliveries } from '../webhooks/fixtures.js';

// Campaigns (docs/earning.md, "Campaigns"), over HTTP: each rule at its edges. The `it` blocks
// share one shop and one clock, in order; each uses customers and campaigns of its own, and
// leaves a ledger that `loyalty verify`'s check finds whole.

const START = Date.UTC(2026, 2, 1, 12);
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

describe(`campaigns (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let gold: number;
  beforeAll(async () => {
    t = await setup({ now: START });
    await createCustomers(t, 40);
    const rule = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'order', points_per_unit: 1, unit_amount: 1, currency: 'EUR' } });
    expect(rule.statusCode, rule.body).toBe(201);
    const tier = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000, earning_multiplier: 1.5 } });
    expect(tier.statusCode, tier.body).toBe(201);
    gold = tier.json().data.id;
  });
  afterEach(() => expectConsistentLedger(t));
  afterAll(() => t.close());

  const create = async (fields: Record<string, unknown>, headers?: Record<string, string>) => {
    const res = await t.request('POST', `${API}/campaigns`, {
      body: { name: 'Double points', starts_at: iso(t.clock.now), ends_at: iso(t.clock.now + DAY), ...fields },
      ...(headers ? { headers } : {}),
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  /** A paid order of `total` euros placed at `placedAt`; returns its points event (undefined when it earned none). */
  const order = async (id: number, customer: number, placedAt: number, total = 100) => {
    const res = await t.request('PUT', `${API}/orders/${id}`, {
      body: { customer_remote_id: customer, total, currency: 'EUR', placed_at: iso(placedAt), financial_status: 'paid' },
    });
    expect([200, 201], res.body).toContain(res.statusCode);
    const events = (await t.request('GET', `${API}/orders/${id}/points_events`)).json().data;
    return { order: res.json().data, event: events[0] };
  };
  const earned = async (id: number, customer: number, placedAt: number, total = 100) => {
    const { event } = await order(id, customer, placedAt, total);
    return [event?.points_amount ?? 0, event?.campaign_id ?? null];
  };

  it('refuses what is not a campaign, naming each field', async () => {
    const post = (body: Record<string, unknown>) => t.request('POST', `${API}/campaigns`, { body });
    const base = { name: 'X', starts_at: iso(START), ends_at: iso(START + DAY) };
    const params = async (body: Record<string, unknown>) => (errorOf(await post(body)).details ?? []).map((d) => [d.param, d.code]);
    expect(await params(base)).toEqual([['multiplier', 'missing']]);
    expect(await params({ ...base, multiplier: 1 })).toEqual([['multiplier', 'missing']]);
    expect(await params({ ...base, multiplier: 10.01 })).toEqual([['multiplier', 'invalid_amount']]);
    expect(await params({ ...base, multiplier: 1.005 })).toEqual([['multiplier', 'invalid_amount']]);
    expect(await params({ ...base, multiplier: 0.5 })).toEqual([['multiplier', 'invalid_amount']]);
    expect((await params({ ...base, bonus_points: 0 }))[0]).toEqual(['bonus_points', expect.any(String)]);
    expect(await params({ ...base, ends_at: iso(START), bonus_points: 5 })).toEqual([['ends_at', 'invalid_range']]);
    expect(await params({ ...base, bonus_points: 5, vip_tier_ids: [gold, 999_999] })).toEqual([['vip_tier_ids', 'vip_tier_not_found']]);
    expect((await params({ ...base, bonus_points: 5, vip_tier_ids: [gold, gold] }))[0]?.[0]).toBe('vip_tier_ids');
    expect((await params({ ...base, bonus_points: 5, status: 'active' }))[0]?.[0]).toBe('status');
    const made = await post({ ...base, multiplier: 10, bonus_points: 1 });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().data).toMatchObject({ multiplier: 10, bonus_points: 1, vip_tier_ids: [], cancelled_at: null, status: 'active' });
    // A PATCH is judged on the campaign as it will be stored.
    const patched = await t.request('PATCH', `${API}/campaigns/${made.json().data.id}`, { body: { ends_at: iso(START - DAY) } });
    expect(errorOf(patched).details).toEqual([expect.objectContaining({ param: 'ends_at', code: 'invalid_range' })]);
    expect((await t.request('DELETE', `${API}/campaigns/${made.json().data.id}`)).statusCode).toBe(200);
  });

  it('runs from starts_at inclusive to ends_at exclusive, by the order’s placed_at', async () => {
    const from = START + 10 * DAY;
    const c = await create({ starts_at: iso(from), ends_at: iso(from + DAY), multiplier: 2 });
    expect(c.status).toBe('scheduled');
    expect(await earned(101, 1, from - 1)).toEqual([100, null]);
    expect(await earned(102, 1, from)).toEqual([200, c.id]);
    expect(await earned(103, 1, from + DAY - 1)).toEqual([200, c.id]);
    expect(await earned(104, 1, from + DAY)).toEqual([100, null]);
    // The order shows it too.
    expect((await order(102, 1, from)).order).toMatchObject({ points_earned: 200 });
    expect(await campaignStatus(c.id, from)).toBe('active');
    expect(await campaignStatus(c.id, from + DAY)).toBe('ended');
    await t.request('DELETE', `${API}/campaigns/${c.id}`);
  });

  async function campaignStatus(id: number, at: number) {
    const before = t.clock.now;
    t.clock.now = at;
    const status = (await t.request('GET', `${API}/campaigns/${id}`)).json().data.status;
    t.clock.now = before;
    return status;
  }

  it('adds bonus points alone, or multiplies alone, after the VIP multiplier, rounding once', async () => {
    const from = START + 20 * DAY;
    const bonus = await create({ starts_at: iso(from), ends_at: iso(from + HOUR), bonus_points: 25 });
    expect(await earned(201, 2, from, 33)).toEqual([58, bonus.id]);
    const times = await create({ starts_at: iso(from + HOUR), ends_at: iso(from + 2 * HOUR), multiplier: 1.5 });
    // A Gold member (×1.5): floor(33 × 1.5 × 1.5) = 74, not floor(floor(33 × 1.5) × 1.5) = 73.
    expect((await postEvent(t, { customer_identifier: '3', source: 'manual', points_amount: 1000 })).statusCode).toBe(201);
    expect((await t.request('GET', `${API}/customers/3`)).json().data.vip_tier).toMatchObject({ id: gold });
    expect(await earned(202, 3, from + HOUR, 33)).toEqual([74, times.id]);
    // One that gives nothing more (floor(1 × 1.5) = 1) is not applied.
    expect(await earned(203, 2, from + HOUR, 1)).toEqual([1, null]);
  });

  it('applies a tier-limited campaign to that tier’s members only', async () => {
    const from = START + 30 * DAY;
    const c = await create({ starts_at: iso(from), ends_at: iso(from + DAY), multiplier: 2, vip_tier_ids: [gold] });
    expect(c.vip_tier_ids).toEqual([gold]);
    expect((await postEvent(t, { customer_identifier: '4', source: 'manual', points_amount: 1000 })).statusCode).toBe(201);
    expect(await earned(301, 4, from)).toEqual([300, c.id]);
    expect(await earned(302, 5, from)).toEqual([100, null]);
  });

  it('applies the one overlapping campaign that gives the most, the lowest id on a tie, never both', async () => {
    const from = START + 40 * DAY;
    const double = await create({ starts_at: iso(from), ends_at: iso(from + DAY), multiplier: 2 });
    const bonus = await create({ starts_at: iso(from + HOUR), ends_at: iso(from + DAY), bonus_points: 150 });
    const same = await create({ starts_at: iso(from), ends_at: iso(from + DAY), bonus_points: 100 });
    expect(await earned(401, 6, from)).toEqual([200, double.id]);
    expect(await earned(402, 6, from + HOUR)).toEqual([250, bonus.id]);
    // 300 × 2 = 600 beats 300 + 150.
    expect(await earned(403, 6, from + HOUR, 300)).toEqual([600, double.id]);
    expect(same.id).toBeGreaterThan(double.id);
    for (const c of [double, bonus, same]) await t.request('DELETE', `${API}/campaigns/${c.id}`);
  });

  it('stops at its cancellation: orders placed before still earn under it, orders after do not', async () => {
    t.clock.now = START + 50 * DAY;
    const c = await create({ starts_at: iso(t.clock.now - DAY), ends_at: iso(t.clock.now + DAY), multiplier: 3 });
    const cancelAt = t.clock.now;
    const cancelled = await t.request('POST', `${API}/campaigns/${c.id}/cancel`, { headers: { 'idempotency-key': 'cancel-1' } });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(cancelled.json().data).toMatchObject({ status: 'cancelled', cancelled_at: iso(cancelAt) });
    // Retried with its key, the same answer; without, it is already cancelled.
    t.clock.advance(HOUR);
    const again = await t.request('POST', `${API}/campaigns/${c.id}/cancel`, { headers: { 'idempotency-key': 'cancel-1' } });
    expect(again.json()).toEqual(cancelled.json());
    expect(errorOf(await t.request('POST', `${API}/campaigns/${c.id}/cancel`))).toMatchObject({ code: 'campaign_not_cancellable' });
    expect(await earned(501, 7, cancelAt - 1)).toEqual([300, c.id]);
    expect(await earned(502, 7, cancelAt)).toEqual([100, null]);
    // An ended campaign cannot be cancelled; an unknown one is not found.
    const ended = await create({ starts_at: iso(t.clock.now - 2 * DAY), ends_at: iso(t.clock.now - DAY), bonus_points: 1 });
    expect(errorOf(await t.request('POST', `${API}/campaigns/${ended.id}/cancel`))).toMatchObject({ code: 'campaign_not_cancellable' });
    expect((await t.request('POST', `${API}/campaigns/987654/cancel`)).statusCode).toBe(404);
    for (const id of [c.id, ended.id]) await t.request('DELETE', `${API}/campaigns/${id}`);
  });

  it('shows the campaign in the preview, at placed_at or now', async () => {
    t.clock.now = START + 60 * DAY;
    const c = await create({ starts_at: iso(t.clock.now), ends_at: iso(t.clock.now + DAY), multiplier: 2, bonus_points: 5 });
    const preview = (body: Record<string, unknown>) =>
      t.request('POST', `${API}/earning_rules/preview`, { body: { customer_identifier: '8', total: 10, currency: 'EUR', ...body } });
    expect((await preview({})).json().data).toMatchObject({ points: 25, campaign_id: c.id, multiplier: 1 });
    expect((await preview({ placed_at: iso(t.clock.now - 1) })).json().data).toMatchObject({ points: 10, campaign_id: null });
    expect((await preview({ placed_at: iso(t.clock.now + DAY) })).json().data).toMatchObject({ points: 10, campaign_id: null });
    expect(errorOf(await preview({ placed_at: 'yesterday' })).code).toBe('validation_failed');
    // The order earns what the preview said.
    expect(await earned(601, 8, t.clock.now, 10)).toEqual([25, c.id]);
    await t.request('DELETE', `${API}/campaigns/${c.id}`);
  });

  it('never double-posts: a retried create, a re-sent order; pending points are released under the campaign too', async () => {
    t.clock.now = START + 70 * DAY;
    const key = { 'idempotency-key': 'campaign-create-1' };
    const first = await create({ multiplier: 2 }, key);
    const second = await t.request('POST', `${API}/campaigns`, {
      body: { name: 'Double points', starts_at: iso(t.clock.now), ends_at: iso(t.clock.now + DAY), multiplier: 2 },
      headers: key,
    });
    expect(second.json().data).toEqual(first);
    expect(
      (await t.request('GET', `${API}/campaigns`, { query: { 'pagination[limit]': '250' } })).json().data.filter((c: { id: number }) => c.id === first.id),
    ).toHaveLength(1);
    await order(701, 9, t.clock.now);
    await order(701, 9, t.clock.now);
    expect((await t.request('GET', `${API}/orders/701/points_events`)).json().data).toHaveLength(1);

    expect((await t.request('PATCH', `${API}/shop`, { body: { points_pending_days: 3 } })).statusCode).toBe(200);
    const { order: pending } = await order(702, 10, t.clock.now);
    expect(pending).toMatchObject({ points_earned: 200, points_pending: 200 });
    t.clock.advance(3 * DAY);
    await releasePendingPoints(t.database.db, t.clock.now);
    const events = (await t.request('GET', `${API}/orders/702/points_events`)).json().data;
    expect(events).toEqual([expect.objectContaining({ points_amount: 200, campaign_id: first.id })]);
    expect((await t.request('PATCH', `${API}/shop`, { body: { points_pending_days: 0 } })).statusCode).toBe(200);
    // A refund's clawback links the campaign as well.
    const refund = await t.request('PUT', `${API}/orders/701`, {
      body: { customer_remote_id: 9, total: 100, currency: 'EUR', placed_at: iso(START + 70 * DAY), financial_status: 'refunded', total_refunded: 100 },
    });
    expect(refund.statusCode).toBe(200);
    const back = (await t.request('GET', `${API}/orders/701/points_events`)).json().data;
    expect(back.map((e: { points_amount: number; campaign_id: number }) => [e.points_amount, e.campaign_id])).toEqual([
      [200, first.id],
      [-200, first.id],
    ]);
    await t.request('DELETE', `${API}/campaigns/${first.id}`);
  });

  it('announces campaign.started and campaign.ended once each, across runs and concurrent runners; a campaign cancelled before it starts, neither', async () => {
    const s = await t.createShop();
    const hook = await t.request('POST', `${API}/webhooks`, {
      token: s.token,
      body: { topics: ['campaign.started', 'campaign.ended'], url: 'https://example.com/hooks' },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    t.clock.now = START + 80 * DAY;
    const post = async (body: Record<string, unknown>) =>
      (await t.request('POST', `${API}/campaigns`, { token: s.token, body: { name: 'C', bonus_points: 10, ...body } })).json().data;
    const runs = await post({ starts_at: iso(t.clock.now + HOUR), ends_at: iso(t.clock.now + 2 * HOUR) });
    const never = await post({ starts_at: iso(t.clock.now + HOUR), ends_at: iso(t.clock.now + 2 * HOUR) });
    const stopped = await post({ starts_at: iso(t.clock.now + HOUR), ends_at: iso(t.clock.now + 5 * HOUR) });
    expect((await t.request('POST', `${API}/campaigns/${never.id}/cancel`, { token: s.token })).statusCode).toBe(200);
    const show = (trx: TestContext['database']['db'], shopId: number, rows: Record<string, unknown>[], now: number) =>
      recordsJson(trx, shopId, campaigns, rows, now);
    const announced = async () => (await storedDeliveries(t, s.shop.id)).map((d) => [d.topic, d.body.data.id, d.body.data.status]);

    await runJob(t, 'announce-campaigns');
    expect(await announced()).toEqual([]);
    t.clock.now += HOUR;
    // Two runners at once, then again: each campaign is announced once.
    await Promise.all([announceCampaigns(t.database.db, t.clock.now, show), announceCampaigns(t.database.db, t.clock.now, show)]);
    await announceCampaigns(t.database.db, t.clock.now, show);
    expect(await announced()).toEqual([
      ['campaign.started', runs.id, 'active'],
      ['campaign.started', stopped.id, 'active'],
    ]);
    t.clock.now += HOUR / 2;
    expect((await t.request('POST', `${API}/campaigns/${stopped.id}/cancel`, { token: s.token })).statusCode).toBe(200);
    await announceCampaigns(t.database.db, t.clock.now, show);
    t.clock.now += 10 * HOUR;
    await Promise.all([announceCampaigns(t.database.db, t.clock.now, show), announceCampaigns(t.database.db, t.clock.now, show)]);
    await announceCampaigns(t.database.db, t.clock.now, show);
    expect(await announced()).toEqual([
      ['campaign.started', runs.id, 'active'],
      ['campaign.started', stopped.id, 'active'],
      ['campaign.ended', stopped.id, 'cancelled'],
      ['campaign.ended', runs.id, 'ended'],
    ]);
    expect(await countDue(t)).toBe(0);
  });

  it('passes the loyalty verify command', async () => {
    const result = await loyalty(t.url, 'verify');
    expect(result.code, result.stderr + result.stdout).toBe(0);
  });
});

async function countDue(t: TestContext): Promise<number> {
  const rows = await t.database.db.selectFrom('campaigns').select('id').where('announce_at', 'is not', null).execute();
  return rows.length;
}
