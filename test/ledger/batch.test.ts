import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { balanceOf, countRows, createCustomers, postBatch, postEvent, expectConsistentLedger } from './fixtures.js';

describe(`points events in a batch (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    await createCustomers(t, 5);
  });
  afterAll(() => t.close());

  const grant = (customer: string, points: unknown, extra: object = {}) => ({
    customer_identifier: customer,
    source: 'manual',
    points_amount: points,
    ...extra,
  });

  it('answers 201 with the events in request order and running balances', async () => {
    const res = await postBatch(t, [grant('1', 10), grant('2', 20), grant('customer1@example.com', 5, { credits_amount: 0.5 })]);
    expect(res.statusCode).toBe(201);
    const data = res.json().data as any[];
    expect(data.map((e) => [e.customer.remote_id, e.points_amount, e.customer.points_balance, e.customer.credits_balance])).toEqual([
      [1, 10, 10, 0],
      [2, 20, 20, 0],
      [1, 5, 15, 0.5],
    ]);
    expect(data[0].id).toBeLessThan(data[1].id);
    expect(data[1].id).toBeLessThan(data[2].id);
  });

  it('applies in array order: a later deduction may spend an earlier grant', async () => {
    const res = await postBatch(t, [grant('3', 50), grant('3', -30), grant('3', 5), grant('3', -25)]);
    expect(res.statusCode).toBe(201);
    expect(res.json().data.map((e: any) => e.customer.points_balance)).toEqual([50, 20, 25, 0]);
  });

  it('is all or nothing, and the 422 lists every failing event', async () => {
    const before = await Promise.all([1, 2, 4].map((c) => balanceOf(t, c)));
    const events = await countRows(t, 'points_events');
    const lots = await countRows(t, 'points_lots');
    const res = await postBatch(t, [
      grant('1', 100),
      grant('4', 5),
      grant('4', -6),
      grant('nobody@example.com', 1),
      grant('2', 1, { source: 'custom_action' }),
      grant('2', '7'),
      grant('1', 1, { colour: 'red', points_amount: 1.5 }),
    ]);
    expect(res.statusCode).toBe(422);
    const error = errorOf(res);
    expect(error.code).toBe('validation_failed');
    expect(error.message).toBe('5 points events are invalid');
    expect(error.details!.map((d) => [d.param, d.code])).toEqual([
      ['points_events[2].points_amount', 'insufficient_balance'],
      ['points_events[3].customer_identifier', 'customer_not_found'],
      ['points_events[4].custom_action_name', 'missing'],
      ['points_events[5].points_amount', 'not_an_int32'],
      ['points_events[6].colour', 'unknown_parameter'],
      ['points_events[6].points_amount', 'not_an_int32'],
    ]);
    expect(await Promise.all([1, 2, 4].map((c) => balanceOf(t, c)))).toEqual(before);
    expect(await countRows(t, 'points_events')).toBe(events);
    expect(await countRows(t, 'points_lots')).toBe(lots);
  });

  it('reports a remote id that names no customer beside the balances it judges, when every field is valid', async () => {
    // Read with the customers' lock: the other events are still judged, and nothing is written.
    const events = await countRows(t, 'points_events');
    const res = await postBatch(t, [grant('1', 1), grant('999', 5), grant(' 998 ', 5), grant('4', -1_000_000), grant('customer2@example.com', 1)]);
    expect(errorOf(res).details).toEqual([
      { param: 'points_events[1].customer_identifier', code: 'customer_not_found', message: 'No customer with remote_id or e-mail "999"' },
      { param: 'points_events[2].customer_identifier', code: 'customer_not_found', message: 'No customer with remote_id or e-mail " 998 "' },
      expect.objectContaining({ param: 'points_events[3].points_amount', code: 'insufficient_balance' }),
    ]);
    expect(errorOf(res).message).toBe('3 points events are invalid');
    const single = await postEvent(t, grant('999', 5));
    expect(errorOf(single).details).toEqual([
      { param: 'customer_identifier', code: 'customer_not_found', message: 'No customer with remote_id or e-mail "999"' },
    ]);
    expect(await countRows(t, 'points_events')).toBe(events);
  });

  it('judges later events as if failed ones were absent', async () => {
    // Event 0 fails, so event 1 has nothing to deduct from: both are reported.
    const res = await postBatch(t, [grant('5', 10, { source: 'nope' }), grant('5', -10)]);
    expect(errorOf(res).details!.map((d) => [d.param, d.code])).toEqual([
      ['points_events[0].source', 'invalid_source'],
      ['points_events[1].points_amount', 'insufficient_balance'],
    ]);
    expect(errorOf(res).message).toBe('2 points events are invalid');
  });

  it('names the one failing event in the message', async () => {
    const res = await postBatch(t, [grant('1', 1), grant('1', '2')]);
    expect(errorOf(res).message).toBe('points_amount must be an integer between -2147483648 and 2147483647');
  });

  it('answers a clear 4xx for an empty, missing, non-array or oversized list, and writes nothing', async () => {
    const events = await countRows(t, 'points_events');
    const cases: [unknown, string, string][] = [
      [{ points_events: [] }, 'points_events', 'too_few'],
      [{}, 'points_events', 'missing'],
      [{ points_events: grant('1', 1) }, 'points_events', 'invalid_type'],
      [{ points_events: 'x' }, 'points_events', 'invalid_type'],
      [{ points_events: Array.from({ length: 1001 }, () => grant('1', 1)) }, 'points_events', 'too_many'],
      [[grant('1', 1)], 'body', 'invalid_type'],
      [{ points_events: [grant('1', 1)], extra: true }, 'extra', 'unknown_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const res = await t.request('POST', `${API}/points_events/batch`, { body });
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(errorOf(res).details).toEqual([expect.objectContaining({ param, code })]);
    }
    const noBody = await t.request('POST', `${API}/points_events/batch`, { headers: { 'content-type': 'application/json' } });
    expect(noBody.statusCode).toBeGreaterThanOrEqual(400);
    expect(noBody.statusCode).toBeLessThan(500);
    expect(await countRows(t, 'points_events')).toBe(events);
  });

  it('takes exactly 1000 events', async () => {
    const res = await postBatch(
      t,
      Array.from({ length: 1000 }, (_, i) => grant(String((i % 5) + 1), 1)),
    );
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toHaveLength(1000);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`points events in a batch: configured maximum (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ config: { batchMaxEvents: 3 } });
    await createCustomers(t, 1);
  });
  afterAll(() => t.close());

  it('follows config.batchMaxEvents', async () => {
    const grant = { customer_identifier: '1', source: 'manual', points_amount: 1 };
    expect((await postBatch(t, [grant, grant, grant])).statusCode).toBe(201);
    const res = await postBatch(t, [grant, grant, grant, grant]);
    expect(errorOf(res).details).toEqual([{ param: 'points_events', code: 'too_many', message: 'points_events must have at most 3 elements' }]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});

describe(`points events in a batch: the answer's text (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    // Grants expire: expires_at is a time, not null.
    t = await setup({ shop: { points_expiry_days: 30 } });
    await createCustomers(t, 2);
    const res = await t.request('PUT', `${API}/customers/3`, { body: { first_name: 'No e-mail' } });
    expect(res.statusCode).toBe(201);
  });
  afterAll(() => t.close());

  // Strings the schema's serialiser escapes in each of its ways: short and long, with and without
  // quotes, backslashes, control characters, and characters beyond ASCII.
  const notes = [
    'Order #1',
    'She said "thanks" \\ twice',
    'tab\there, newline\nthere',
    'café ☕ 🎉 \u2028 \u00e9',
    'a note longer than forty-two characters, with nothing to escape',
    'a note longer than forty-two characters, with "quotes" and a \\ backslash',
    'x'.repeat(2000),
  ];

  it('is, byte for byte, what the schema writes for the same events read one by one', async () => {
    const events = [
      ...notes.map((note, i) => ({
        customer_identifier: String((i % 3) + 1),
        source: 'order',
        points_amount: 10 + i,
        external_note: note,
        internal_note: note,
      })),
      { customer_identifier: 'customer2@example.com', source: 'custom_action', custom_action_name: 'Joined "the club"', credits_amount: 12.34 },
      { customer_identifier: '1', source: 'manual', points_amount: -3, credits_amount: 0, applied_at: '2026-01-15T12:00:00.5Z' },
      { customer_identifier: '2', source: 'refund', credits_amount: -0.01 },
    ];
    const res = await postBatch(t, events, { 'idempotency-key': 'text-1' });
    expect(res.statusCode).toBe(201);
    const ids = (res.json().data as { id: number }[]).map((e) => e.id);
    expect(ids).toHaveLength(events.length);
    const alone = await Promise.all(ids.map((id) => t.request('GET', `${API}/points_events/${id}`)));
    expect(alone.map((r) => r.statusCode)).toEqual(ids.map(() => 200));
    // `{"data":{…}}` each: the events' texts, in a list.
    const expected = `{"data":[${alone.map((r) => r.body.slice('{"data":'.length, -1)).join(',')}]}`;
    expect(res.body).toBe(expected);
    expect(res.headers['content-type']).toBe(alone[0]!.headers['content-type']);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(expected)));
    // A retry replays the same bytes.
    const again = await postBatch(t, events, { 'idempotency-key': 'text-1' });
    expect([again.statusCode, again.headers['idempotent-replayed'], again.body]).toEqual([201, 'true', expected]);
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
