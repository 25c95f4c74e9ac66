import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, createCustomers, postBatch, postEvent } from './fixtures.js';

// GET /customers/{customer_identifier}/lots: a customer's open lots, whose remainders are the
// available balances ("why this balance"), in both pagination modes.

const at = (days: number) => new Date(Date.UTC(2026, 0, 15, 12) + days * DAY).toISOString();

interface LotJson {
  id: number;
  kind: string;
  amount: number;
  remaining: number;
  expires_at: string | null;
  points_event: { id: number; source: string; internal_note: string | null };
}

describe(`a customer's open lots (${TEST_DIALECT})`, () => {
  // The `it` blocks share one context and move its clock on: they run in order.
  let t: TestContext;
  let events: number[];
  const lots = async (query = '', customer = '1') => {
    const res = await t.request('GET', `${API}/customers/${customer}/lots${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { links: Record<string, unknown>; data: LotJson[] };
  };
  const remaining = (list: LotJson[]) => list.map((l) => [l.points_event.id, l.remaining]);

  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: null } });
    await createCustomers(t, 2);
    const granted = await postBatch(t, [
      { customer_identifier: '1', source: 'manual', points_amount: 10, expires_at: at(30), internal_note: 'Welcome' },
      { customer_identifier: '1', source: 'order', points_amount: 20, expires_at: at(10) },
      { customer_identifier: '1', source: 'review', points_amount: 30 },
      { customer_identifier: '1', source: 'manual', credits_amount: 5.5 },
      { customer_identifier: '1', source: 'manual', points_amount: 4, expires_at: at(5) },
    ]);
    expect(granted.statusCode, granted.body).toBe(201);
    events = (granted.json().data as { id: number }[]).map((e) => e.id);
    // First-expiring first: the 4 of day 5, then 11 of the 20 of day 10.
    expect((await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: -15 })).statusCode).toBe(201);
  });
  afterAll(() => t.close());

  it('lists each open lot with its granting event and what remains, adding up to the balances; a spent lot is gone', async () => {
    const page = await lots();
    const [a, b, c, credits, spent] = events;
    expect(page.data.map((l) => [l.points_event.id, l.kind, l.amount, l.remaining])).toEqual([
      [a, 'points', 10, 10],
      [b, 'points', 20, 9],
      [c, 'points', 30, 30],
      [credits, 'credits', 5.5, 5.5],
    ]);
    expect(page.data.map((l) => l.points_event.id)).not.toContain(spent);
    expect(page.data[0]).toMatchObject({ expires_at: at(30), points_event: { source: 'manual', internal_note: 'Welcome' } });
    expect(page.data[2]!.expires_at).toBeNull();
    expect(page.links.next).toBeNull();
    const balance = await balanceOf(t, 1);
    expect(page.data.filter((l) => l.kind === 'points').reduce((sum, l) => sum + l.remaining, 0)).toBe(balance.points);
    expect((await lots('?kind=credits')).data.map((l) => l.remaining)).toEqual([balance.credits]);
    expect((await lots('', '2')).data).toEqual([]);
  });

  it('sorts by expires_at in the order deductions consume lots (never-expiring last), both ways, in offset mode', async () => {
    const [a, b, c, credits] = events;
    const asc = await lots('?kind=points&sort[order_type]=expires_at');
    expect(asc.data.map((l) => l.points_event.id)).toEqual([b, a, c]);
    const desc = await lots('?sort[order_type]=expires_at&sort[order_direction]=desc&pagination[per_page]=2');
    // Ties (both never expire) by lot id, the same way.
    expect(desc.data.map((l) => l.points_event.id)).toEqual([credits, c]);
    expect(desc.links.next).toMatch(/pagination\[page\]=2/);
    expect(desc.links.last).toMatch(/pagination\[page\]=2/);
    const second = await lots('?sort[order_type]=expires_at&sort[order_direction]=desc&pagination[per_page]=2&pagination[page]=2');
    expect(second.data.map((l) => l.points_event.id)).toEqual([a, b]);
    expect(second.links.next).toBeNull();
  });

  it('pages by cursor, lot id ascending', async () => {
    const first = await lots('?pagination[limit]=3');
    expect(first.data).toHaveLength(3);
    const next = first.links.next_since_id as number;
    expect(next).toBe(first.data[2]!.id);
    const rest = await lots(`?pagination[since_id]=${next}&pagination[limit]=3`);
    expect(remaining(rest.data)).toEqual([[events[3], 5.5]]);
    expect(rest.links.next_since_id).toBeNull();
  });

  it('leaves out a lot once it expired, before the sweep writes it off, as the balance does', async () => {
    t.clock.advance(11 * DAY);
    const page = await lots('?kind=points');
    expect(remaining(page.data)).toEqual([
      [events[0], 10],
      [events[2], 30],
    ]);
    expect((await balanceOf(t, 1)).points).toBe(40);
  });

  it('answers 400 naming a bad parameter and 404 for an unknown customer', async () => {
    for (const [query, param] of [
      ['kind=gold', 'kind'],
      ['sort[order_type]=amount', 'sort[order_type]'],
      ['pagination[limit]=251', 'pagination[limit]'],
    ]) {
      const bad = await t.request('GET', `${API}/customers/1/lots?${query}`);
      expect(bad.statusCode, query).toBe(400);
      expect(errorOf(bad).code).toBe('invalid_parameter');
      expect(errorOf(bad).details!.map((d) => d.param)).toEqual([param]);
    }
    const missing = await t.request('GET', `${API}/customers/999/lots`);
    expect(missing.statusCode).toBe(404);
    expect(errorOf(missing).code).toBe('not_found');
  });
});
