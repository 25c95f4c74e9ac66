import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, postEvent } from '../ledger/fixtures.js';

// A reward shows how many times it was redeemed (docs/ledger.md, "Redemptions"): a redemption
// counts it up, on any day; a refused one never does; a void gives the points back and keeps
// the count (as limit_per_customer does). The `it` blocks share one shop, in order.

describe(`rewards' redemptions_count (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let limited: number;
  let pooled: number;
  let untouched: number;
  beforeAll(async () => {
    t = await setup({ shop: { points_expiry_days: null } });
    await createCustomers(t, 2);
    expect((await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1000 })).statusCode).toBe(201);
    expect((await postEvent(t, { customer_identifier: '2', source: 'manual', points_amount: 50 })).statusCode).toBe(201);
    const reward = async (name: string, fields: Record<string, unknown> = {}) => {
      const res = await t.request('POST', `${API}/rewards`, { body: { name, kind: 'free_shipping', points_price: 100, ...fields } });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.redemptions_count).toBe(0);
      return res.json().data.id as number;
    };
    limited = await reward('Free shipping', { limit_per_customer: 2 });
    pooled = await reward('Tote bag');
    untouched = await reward('Mug');
    const codes = await t.request('POST', `${API}/rewards/${pooled}/codes`, { body: { codes: ['TOTE-1'] } });
    expect(codes.statusCode, codes.body).toBe(201);
  });
  afterAll(() => t.close());

  const redeem = (reward_id: number, customer: string) => t.request('POST', `${API}/redemptions`, { body: { reward_id, customer_identifier: customer } });
  /** Every reward's count, as the list shows it (both pagination modes) and as GET /rewards/{id} does. */
  const counts = async () => {
    const cursor = (await t.request('GET', `${API}/rewards`, { query: { 'pagination[limit]': '2' } })).json();
    const rest = (await t.request('GET', `${API}/rewards`, { query: { 'pagination[since_id]': String(cursor.links.next_since_id) } })).json();
    const paged = (await t.request('GET', `${API}/rewards`, { query: { 'pagination[page]': '1' } })).json();
    const listed = Object.fromEntries([...cursor.data, ...rest.data].map((r: { id: number; redemptions_count: number }) => [r.id, r.redemptions_count]));
    expect(Object.fromEntries(paged.data.map((r: { id: number; redemptions_count: number }) => [r.id, r.redemptions_count]))).toEqual(listed);
    for (const id of [limited, pooled, untouched]) expect((await t.request('GET', `${API}/rewards/${id}`)).json().data.redemptions_count).toBe(listed[id]);
    return [listed[limited], listed[pooled], listed[untouched]];
  };

  it('counts each redemption, on any day, and no refused one', async () => {
    expect(await counts()).toEqual([0, 0, 0]);
    expect((await redeem(limited, '1')).statusCode).toBe(201);
    expect(await counts()).toEqual([1, 0, 0]);

    // Not enough points: refused, not counted.
    const poor = await redeem(limited, '2');
    expect(errorOf(poor).code).toBe('insufficient_balance');
    // A redemption on another day adds to the same count.
    t.clock.advance(3 * DAY);
    expect((await redeem(limited, '1')).statusCode).toBe(201);
    // The limit per customer is reached: refused, not counted.
    expect(errorOf(await redeem(limited, '1')).code).toBe('redemption_limit_reached');
    expect(await counts()).toEqual([2, 0, 0]);

    // The pool's one code, then out of codes; a disabled reward refuses too.
    expect((await redeem(pooled, '1')).statusCode).toBe(201);
    expect(errorOf(await redeem(pooled, '1')).code).toBe('reward_out_of_codes');
    expect((await t.request('PATCH', `${API}/rewards/${untouched}`, { body: { enabled: false } })).json().data.redemptions_count).toBe(0);
    expect(errorOf(await redeem(untouched, '1')).code).toBe('reward_disabled');
    expect(await counts()).toEqual([2, 1, 0]);
  });

  it('keeps the count when a redemption is voided, as the limit per customer does', async () => {
    const redemptions = (await t.request('GET', `${API}/redemptions`)).json().data as { id: number; reward: { id: number } }[];
    const first = redemptions.find((r) => r.reward.id === limited)!;
    const voided = await t.request('POST', `${API}/redemptions/${first.id}/void`);
    expect(voided.statusCode, voided.body).toBe(200);
    expect(await counts()).toEqual([2, 1, 0]);
    expect(errorOf(await redeem(limited, '1')).code).toBe('redemption_limit_reached');
  });
});
