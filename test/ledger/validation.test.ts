import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, countRows, createCustomers, postBatch, postEvent, expectConsistentLedger } from './fixtures.js';

// docs/errors.md: validation reports every failing field, not only the schema's. Each
// rule runs on every field whose own value passed its schema (a rule that needs a sibling
// runs once that sibling is valid), one detail per failing param, at most 100.

/** [param, code] of every detail, sorted: the set of failures, whatever their order. */
const failures = (res: Parameters<typeof errorOf>[0]) =>
  errorOf(res)
    .details!.map((d) => [d.param, d.code])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));

describe(`points events: every failing field at once (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 5);
  });
  afterAll(() => t.close());

  it('runs the rules of the fields that passed their schema next to the schema errors', async () => {
    const res = await postEvent(t, {
      customer_identifier: '3',
      source: 'bogus',
      points_amount: 2147483648,
      credits_amount: 0.001,
      applied_at: 'x',
      expires_at: '2030-01-01T00:00:00Z',
    });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).code).toBe('validation_failed');
    expect(errorOf(res).message).toBe('5 fields are invalid');
    expect(failures(res)).toEqual([
      ['applied_at', 'invalid_datetime'],
      ['credits_amount', 'invalid_credits_amount'],
      ['expires_at', 'expires_at_not_allowed'],
      ['points_amount', 'not_an_int32'],
      ['source', 'invalid_source'],
    ]);
  });

  it('reports custom_action_name and amount rules beside a bad sibling', async () => {
    const url = await postEvent(t, { customer_identifier: '1', source: 'visit_url', custom_action_name: 'example.com', points_amount: 'x' });
    expect(failures(url)).toEqual([
      ['custom_action_name', 'invalid_url'],
      ['points_amount', 'not_an_int32'],
    ]);
    const named = await postEvent(t, {
      customer_identifier: '1',
      source: 'custom_action',
      points_amount: 1,
      applied_at: '2026-01-15T13:00:00Z',
      colour: 'red',
    });
    expect(failures(named)).toEqual([
      ['applied_at', 'applied_at_in_future'],
      ['colour', 'unknown_parameter'],
      ['custom_action_name', 'missing'],
    ]);
    const noAmount = await postEvent(t, { customer_identifier: '1', source: 'bogus' });
    expect(failures(noAmount)).toEqual([
      ['points_amount', 'amount_required'],
      ['source', 'invalid_source'],
    ]);
  });

  it('does not judge a rule whose sibling failed: one detail per param', async () => {
    // The source is unknown, so whether custom_action_name is required cannot be said.
    expect(failures(await postEvent(t, { customer_identifier: '1', source: 7, points_amount: 1 }))).toEqual([['source', 'invalid_source']]);
    // The amount is not a number, so amount_required is not claimed on top of not_an_int32.
    expect(failures(await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: '5' }))).toEqual([['points_amount', 'not_an_int32']]);
  });

  it('looks the customer up when customer_identifier is valid, even when other fields fail', async () => {
    const res = await postEvent(t, { customer_identifier: 'nobody@example.com', source: 'bogus', points_amount: 1, credits_amount: 1.001 });
    expect(failures(res)).toEqual([
      ['credits_amount', 'invalid_credits_amount'],
      ['customer_identifier', 'customer_not_found'],
      ['source', 'invalid_source'],
    ]);
    // A customer_identifier that failed its schema is not looked up: one detail for it.
    expect(failures(await postEvent(t, { customer_identifier: '', source: 'bogus', points_amount: 1 }))).toEqual([
      ['customer_identifier', 'blank'],
      ['source', 'invalid_source'],
    ]);
  });

  it('judges balances only for events whose fields are all valid', async () => {
    // Customer 5 has nothing; the deduction is not called insufficient next to its bad source.
    const res = await postEvent(t, { customer_identifier: '5', source: 'bogus', points_amount: -1000 });
    expect(failures(res)).toEqual([['source', 'invalid_source']]);
  });

  it('reports every failing element of a batch, database errors next to field errors, and writes nothing', async () => {
    const before = await balanceOf(t, 1);
    const events = await countRows(t, 'points_events');
    const res = await postBatch(t, [
      { customer_identifier: 'nobody@example.com', source: 'manual', points_amount: 1 },
      { customer_identifier: '1', source: 'bogus', points_amount: 5, credits_amount: 0.001, expires_at: '2030-01-01T00:00:00Z' },
      { customer_identifier: 'ghost@example.com', source: 'manual', points_amount: 'x' },
      { customer_identifier: '1', source: 'manual', points_amount: 1 },
    ]);
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).message).toBe('3 points events are invalid');
    expect(failures(res)).toEqual([
      ['points_events[0].customer_identifier', 'customer_not_found'],
      ['points_events[1].credits_amount', 'invalid_credits_amount'],
      ['points_events[1].expires_at', 'expires_at_not_allowed'],
      ['points_events[1].source', 'invalid_source'],
      ['points_events[2].customer_identifier', 'customer_not_found'],
      ['points_events[2].points_amount', 'not_an_int32'],
    ]);
    // Elements in order, the schema's errors of an element before its rules'.
    expect(errorOf(res).details!.map((d) => d.param)[0]).toBe('points_events[0].customer_identifier');
    expect(await balanceOf(t, 1)).toEqual(before);
    expect(await countRows(t, 'points_events')).toBe(events);
  });

  it("does not let an unknown top-level field hide the elements' errors", async () => {
    const res = await t.request('POST', `${API}/points_events/batch`, {
      body: {
        extra: true,
        points_events: [
          { customer_identifier: '1', source: 'manual', points_amount: 1 },
          { customer_identifier: '1', source: 'manual', credits_amount: 0.001, colour: 'red' },
        ],
      },
    });
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).message).toBe('1 field and 1 points event are invalid');
    expect(errorOf(res).details!.map((d) => [d.param, d.code])).toEqual([
      ['extra', 'unknown_parameter'],
      ['points_events[1].colour', 'unknown_parameter'],
      ['points_events[1].credits_amount', 'invalid_credits_amount'],
    ]);
  });

  it('lists at most 100 details and counts every failing event in the message', async () => {
    const bad = { customer_identifier: '1', source: 'bogus', credits_amount: 0.001 };
    const res = await postBatch(
      t,
      Array.from({ length: 60 }, () => bad),
    );
    expect(res.statusCode).toBe(422);
    expect(errorOf(res).message).toBe('60 points events are invalid');
    const details = errorOf(res).details!;
    expect(details).toHaveLength(100);
    expect(details.slice(0, 2).map((d) => [d.param, d.code])).toEqual([
      ['points_events[0].source', 'invalid_source'],
      ['points_events[0].credits_amount', 'invalid_credits_amount'],
    ]);
    expect(details[99]!.param).toBe('points_events[49].credits_amount');
  });

  it('still answers a bad list itself without looking into its elements', async () => {
    const res = await t.request('POST', `${API}/points_events/batch`, { body: { points_events: [], extra: 1 } });
    expect(failures(res)).toEqual([
      ['extra', 'unknown_parameter'],
      ['points_events', 'too_few'],
    ]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`points events: expiry rules beside other failures (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true, points_expiry_days: 30 } });
    await createCustomers(t, 1);
  });
  afterAll(() => t.close());

  it('reports expires_at on a deduction next to a bad applied_at', async () => {
    const res = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: -1, applied_at: 'x', expires_at: '2030-01-01T00:00:00Z' });
    expect(failures(res)).toEqual([
      ['applied_at', 'invalid_datetime'],
      ['expires_at', 'expires_at_on_deduction'],
    ]);
  });

  it('reports expires_at before applied_at next to a bad source', async () => {
    const res = await postEvent(t, {
      customer_identifier: '1',
      source: 'bogus',
      points_amount: 5,
      applied_at: '2026-01-10T00:00:00Z',
      expires_at: '2026-01-09T00:00:00Z',
    });
    expect(failures(res)).toEqual([
      ['expires_at', 'expires_at_before_applied_at'],
      ['source', 'invalid_source'],
    ]);
  });

  it('waits for the fields a rule needs: no guess about a bad amount or applied_at', async () => {
    // Whether the event deducts is unknown while points_amount is bad.
    expect(failures(await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 'x', expires_at: '2030-01-01T00:00:00Z' }))).toEqual([
      ['points_amount', 'not_an_int32'],
    ]);
    // applied_at failed, so expires_at is not compared with it.
    expect(
      failures(
        await postEvent(t, {
          customer_identifier: '1',
          source: 'manual',
          points_amount: 5,
          applied_at: '2030-01-01T00:00:00Z',
          expires_at: '2029-01-01T00:00:00Z',
        }),
      ),
    ).toEqual([['applied_at', 'applied_at_in_future']]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
