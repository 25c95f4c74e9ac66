import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orders } from '../../src/records/resources/orders.js';
import { validateImported } from '../../src/records/resource.js';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// docs/errors.md: validation reports every failing field, not only the schema's. Money
// decimals, cross-field rules and database rules (unique values, references) run on every
// field that passed its schema, beside the schema's errors.

const failures = (res: Parameters<typeof errorOf>[0]) =>
  errorOf(res)
    .details!.map((d) => [d.param, d.code])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));

const ORDER = { customer_remote_id: null, total: 59.9, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-10T09:30:00Z' };

describe(`records: every failing field at once (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let rewardId: number;
  beforeAll(async () => {
    t = await setup();
    const reward = await t.request('POST', `${API}/rewards`, { body: { name: 'Ship', points_price: 100, kind: 'free_shipping' } });
    rewardId = reward.json().data.id;
  });
  afterAll(() => t.close());

  it('reports money decimals beside a schema error (order PUT)', async () => {
    const res = await t.request('PUT', `${API}/orders/42`, { body: { ...ORDER, total: 59.999, currency: 'eur' } });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).message).toBe('2 fields are invalid');
    expect(failures(res)).toEqual([
      ['currency', 'invalid_format'],
      ['total', 'invalid_amount'],
    ]);
    expect((await t.request('GET', `${API}/orders/42`)).statusCode).toBe(404);
  });

  it("reports a reward's value decimals beside a bad kind or points_price (PATCH)", async () => {
    const badKind = await t.request('PATCH', `${API}/rewards/${rewardId}`, { body: { kind: 'bogus', value: 1.234 } });
    expect(failures(badKind)).toEqual([
      ['kind', 'invalid_value'],
      ['value', 'invalid_amount'],
    ]);
    const badPrice = await t.request('PATCH', `${API}/rewards/${rewardId}`, { body: { points_price: 0, value: 1.234 } });
    expect(failures(badPrice)).toEqual([
      ['points_price', 'out_of_range'],
      ['value', 'invalid_amount'],
    ]);
    expect((await t.request('GET', `${API}/rewards/${rewardId}`)).json().data).toMatchObject({ kind: 'free_shipping', points_price: 100, value: 0 });
  });

  it('runs a cross-field rule when the fields it reads are valid, and only then', async () => {
    const res = await t.request('POST', `${API}/rewards`, { body: { name: 'Half', points_price: -5, kind: 'percentage_discount', value: 150 } });
    expect(failures(res)).toEqual([
      ['points_price', 'out_of_range'],
      ['value', 'invalid_percentage'],
    ]);
    // kind failed: the percentage rule cannot be judged.
    const badKind = await t.request('POST', `${API}/rewards`, { body: { name: 'Half', points_price: -5, kind: 'percent', value: 150 } });
    expect(failures(badKind)).toEqual([
      ['kind', 'invalid_value'],
      ['points_price', 'out_of_range'],
    ]);
  });

  it('checks unique values and references beside field errors', async () => {
    expect((await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 1000 } })).statusCode).toBe(201);
    const dup = await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: -1 } });
    expect(failures(dup)).toEqual([
      ['name', 'name_taken'],
      ['points_threshold', 'out_of_range'],
    ]);
    const referral = await t.request('POST', `${API}/referrals`, { body: { referrer_remote_id: 31337, referred_email: 'not an e-mail', status: 'won' } });
    expect(failures(referral)).toEqual([
      ['referred_email', 'invalid_format'],
      ['referrer_remote_id', 'customer_not_found'],
      // status is the programme's now (POST /referrals/{id}/complete, cancel): not writable.
      ['status', 'unknown_parameter'],
    ]);
  });

  it("tells a body's own errors before a missing record", async () => {
    const res = await t.request('PATCH', `${API}/rewards/987654`, { body: { value: 1.234 } });
    expect(res.statusCode).toBe(422);
    expect(failures(res)).toEqual([['value', 'invalid_amount']]);
    expect((await t.request('PATCH', `${API}/rewards/987654`, { body: { value: 1.5 } })).statusCode).toBe(404);
  });

  it('gives an imported row every failing field, as a PUT would', () => {
    const details = validateImported(orders, { ...ORDER, total: 59.999, currency: 'eur' }, t.config);
    expect(details.map((d) => [d.param, d.code]).sort()).toEqual([
      ['currency', 'invalid_format'],
      ['total', 'invalid_amount'],
    ]);
  });
});
