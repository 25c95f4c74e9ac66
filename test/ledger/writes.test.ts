import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, countRows, createCustomers, postEvent, expectConsistentLedger } from './fixtures.js';

describe(`points events: the rules of one event (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 5);
  });
  afterAll(() => t.close());

  const detailsOf = (res: { json(): any }) => (res.json().error.details as { param: string; code: string }[]).map((d) => [d.param, d.code]);

  it('grants points and credits and answers the event with the balances after it', async () => {
    const res = await postEvent(t, {
      customer_identifier: '1',
      source: 'order',
      points_amount: 120,
      credits_amount: 5.5,
      external_note: 'Order #1042',
      internal_note: 'auto',
    });
    expect(res.statusCode).toBe(201);
    const event = res.json().data;
    expect(event).toEqual({
      id: expect.any(Number),
      customer: { remote_id: 1, email: 'customer1@example.com', points_balance: 120, credits_balance: 5.5 },
      source: 'order',
      points_amount: 120,
      credits_amount: 5.5,
      internal_note: 'auto',
      external_note: 'Order #1042',
      custom_action_name: null,
      campaign_id: null,
      applied_at: '2026-01-15T12:00:00.000Z',
      expires_at: null,
      created_at: '2026-01-15T12:00:00.000Z',
      reverses_event_id: null,
      reversed_by_event_id: null,
      redemption_id: null,
      earning_rule_id: null,
      order_remote_id: null,
    });
    expect(await balanceOf(t, 1)).toEqual({ points: 120, credits: 5.5 });
  });

  it('resolves the customer by e-mail, case-insensitively', async () => {
    const res = await postEvent(t, { customer_identifier: 'Customer2@EXAMPLE.com', source: 'manual', points_amount: 7 });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.customer).toMatchObject({ remote_id: 2, points_balance: 7 });
  });

  it('answers an unknown customer with customer_not_found', async () => {
    for (const identifier of ['999', 'nobody@example.com', 'not-an-id']) {
      const res = await postEvent(t, { customer_identifier: identifier, source: 'manual', points_amount: 1 });
      expect(res.statusCode).toBe(422);
      expect(detailsOf(res)).toEqual([['customer_identifier', 'customer_not_found']]);
    }
  });

  it('does not coerce types: "10" is not an integer', async () => {
    const res = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: '10' });
    expect(res.statusCode).toBe(422);
    const error = errorOf(res);
    expect(error.code).toBe('validation_failed');
    expect(error.details).toEqual([
      { param: 'points_amount', code: 'not_an_int32', message: 'points_amount must be an integer between -2147483648 and 2147483647' },
    ]);
    expect(error.message).toBe('points_amount must be an integer between -2147483648 and 2147483647');
  });

  it('accepts the int32 range and nothing beyond it', async () => {
    expect((await postEvent(t, { customer_identifier: '3', source: 'manual', points_amount: 2147483647 })).statusCode).toBe(201);
    for (const points of [2147483648, -2147483649, 1.5]) {
      const res = await postEvent(t, { customer_identifier: '3', source: 'manual', points_amount: points });
      expect(detailsOf(res)).toEqual([['points_amount', 'not_an_int32']]);
    }
  });

  it('takes credits with at most 2 decimals, exactly', async () => {
    for (const credits of [0.001, 1.005, 0.1 + 0.2, '1.00']) {
      const res = await postEvent(t, { customer_identifier: '4', source: 'manual', credits_amount: credits });
      expect(res.statusCode).toBe(422);
      expect(detailsOf(res)).toEqual([['credits_amount', 'invalid_credits_amount']]);
    }
    for (const credits of [19.99, 0.07, 1e2])
      expect((await postEvent(t, { customer_identifier: '4', source: 'manual', credits_amount: credits })).statusCode).toBe(201);
    expect((await balanceOf(t, 4)).credits).toBe(120.06);
  });

  it('requires a non-zero amount', async () => {
    for (const body of [{}, { points_amount: 0 }, { points_amount: 0, credits_amount: 0 }]) {
      const res = await postEvent(t, { customer_identifier: '1', source: 'manual', ...body });
      expect(detailsOf(res)).toEqual([['points_amount', 'amount_required']]);
    }
  });

  it('checks source and requires custom_action_name for custom_action and visit_url', async () => {
    expect(detailsOf(await postEvent(t, { customer_identifier: '1', source: 'gift', points_amount: 1 }))).toEqual([['source', 'invalid_source']]);
    expect(detailsOf(await postEvent(t, { customer_identifier: '1', points_amount: 1 }))).toEqual([['source', 'missing']]);
    expect(detailsOf(await postEvent(t, { customer_identifier: '1', source: 'custom_action', points_amount: 1 }))).toEqual([['custom_action_name', 'missing']]);
    expect(detailsOf(await postEvent(t, { customer_identifier: '1', source: 'custom_action', custom_action_name: '  ', points_amount: 1 }))).toEqual([
      ['custom_action_name', 'missing'],
    ]);
    expect(detailsOf(await postEvent(t, { customer_identifier: '1', source: 'visit_url', custom_action_name: 'example.com', points_amount: 1 }))).toEqual([
      ['custom_action_name', 'invalid_url'],
    ]);
    const named = await postEvent(t, { customer_identifier: '1', source: 'visit_url', custom_action_name: 'https://example.com/blog', points_amount: 1 });
    expect(named.statusCode).toBe(201);
    expect(named.json().data).toMatchObject({ source: 'visit_url', custom_action_name: 'https://example.com/blog' });
  });

  it('reports every failing field and rejects unknown ones', async () => {
    const res = await postEvent(t, { customer_identifier: '', source: 'gift', points_amount: 'x', colour: 'red' });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).message).toBe('4 fields are invalid');
    expect(detailsOf(res)).toEqual(
      expect.arrayContaining([
        ['customer_identifier', 'blank'],
        ['source', 'invalid_source'],
        ['points_amount', 'not_an_int32'],
        ['colour', 'unknown_parameter'],
      ]),
    );
  });

  it('refuses text PostgreSQL cannot store (NUL characters) before reading any field', async () => {
    const before = await countRows(t, 'points_events');
    const res = await postEvent(t, { customer_identifier: '1\u0000', source: 'manual', points_amount: 1, internal_note: 'a\u0000b' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_json');
    expect(await countRows(t, 'points_events')).toBe(before);
  });

  it('defaults applied_at to now (omitted or blank) and accepts RFC 3339 with offsets', async () => {
    for (const applied_at of [undefined, '', '  ', null]) {
      const res = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, ...(applied_at === undefined ? {} : { applied_at }) });
      expect(res.json().data.applied_at).toBe('2026-01-15T12:00:00.000Z');
    }
    const res = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, applied_at: '2026-01-10T09:30:00.123456+02:00' });
    expect(res.json().data.applied_at).toBe('2026-01-10T07:30:00.123Z');
  });

  it('allows applied_at up to 5 minutes ahead, not more', async () => {
    const ok = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, applied_at: '2026-01-15T12:05:00Z' });
    expect(ok.statusCode).toBe(201);
    const late = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, applied_at: '2026-01-15T12:05:00.001Z' });
    expect(detailsOf(late)).toEqual([['applied_at', 'applied_at_in_future']]);
    for (const bad of ['2026-01-15', 'yesterday', '2026-02-30T00:00:00Z', 5]) {
      expect(detailsOf(await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, applied_at: bad }))).toEqual([
        ['applied_at', 'invalid_datetime'],
      ]);
    }
  });

  it('refuses expires_at on a shop without per-event expiry', async () => {
    const res = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, expires_at: '2026-06-01T00:00:00Z' });
    expect(detailsOf(res)).toEqual([['expires_at', 'expires_at_not_allowed']]);
    expect((await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1, expires_at: '' })).statusCode).toBe(201);
  });

  it('never takes a balance below zero, and writes nothing when refusing', async () => {
    await postEvent(t, { customer_identifier: '5', source: 'manual', points_amount: 10, credits_amount: 1 });
    const events = await countRows(t, 'points_events');
    const res = await postEvent(t, { customer_identifier: '5', source: 'refund', points_amount: -11, credits_amount: -1.01 });
    expect(res.statusCode).toBe(422);
    expect(detailsOf(res)).toEqual([
      ['points_amount', 'insufficient_balance'],
      ['credits_amount', 'insufficient_balance'],
    ]);
    expect(await countRows(t, 'points_events')).toBe(events);
    const exact = await postEvent(t, { customer_identifier: '5', source: 'refund', points_amount: -10, credits_amount: -1 });
    expect(exact.statusCode).toBe(201);
    expect(exact.json().data.customer).toMatchObject({ points_balance: 0, credits_balance: 0 });
  });

  it('lets one event turn points into credits', async () => {
    await postEvent(t, { customer_identifier: '5', source: 'manual', points_amount: 100 });
    const res = await postEvent(t, { customer_identifier: '5', source: 'manual', points_amount: -100, credits_amount: 1 });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.customer).toMatchObject({ points_balance: 0, credits_balance: 1 });
  });

  it("keeps shops apart: another shop's customer is not found", async () => {
    const other = await t.createShop();
    const res = await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1', source: 'manual', points_amount: 1 }, token: other.token });
    expect(detailsOf(res)).toEqual([['customer_identifier', 'customer_not_found']]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`points events: expiry settings (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: 30 } });
    await createCustomers(t, 1);
  });
  afterAll(() => t.close());

  it("defaults expires_at to applied_at plus the shop's points_expiry_days", async () => {
    const res = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 5, applied_at: '2026-01-10T00:00:00Z' });
    expect(res.json().data.expires_at).toBe(new Date(Date.UTC(2026, 0, 10) + 30 * DAY).toISOString());
  });

  it('takes an explicit expires_at after applied_at, and not on a deduction', async () => {
    const ok = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 5, expires_at: '2026-03-01T00:00:00Z' });
    expect(ok.json().data.expires_at).toBe('2026-03-01T00:00:00.000Z');
    const before = await postEvent(t, {
      customer_identifier: '1',
      source: 'manual',
      points_amount: 5,
      applied_at: '2026-01-10T00:00:00Z',
      expires_at: '2026-01-10T00:00:00Z',
    });
    expect(before.json().error.details).toEqual([expect.objectContaining({ param: 'expires_at', code: 'expires_at_before_applied_at' })]);
    const deduction = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: -1, expires_at: '2026-03-01T00:00:00Z' });
    expect(deduction.json().error.details).toEqual([expect.objectContaining({ param: 'expires_at', code: 'expires_at_on_deduction' })]);
    const plain = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: -1 });
    expect(plain.json().data.expires_at).toBeNull();
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
