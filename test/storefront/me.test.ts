import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch } from '../ledger/fixtures.js';
import { asCustomer, createKey, customerToken, type TestKey } from './fixtures.js';

// GET /me's upcoming_expiries: one entry per expiry instant, soonest first, up to 5, exact
// however many lots share an instant, and never what expired already (swept or not).

const START = Date.UTC(2026, 0, 15, 12);
const at = (days: number) => new Date(START + days * DAY).toISOString();

describe(`the shopper's upcoming expiries (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let key: TestKey;
  beforeAll(async () => {
    t = await setup({ shop: { per_event_expiry: true }, now: START });
    await createCustomers(t, 1);
    key = await createKey(t);
  });
  afterAll(() => t.close());

  const me = async () => (await asCustomer(t, 'GET', '/me', await customerToken(t, key))).json().data;

  it('sums the lots of each instant, points and credits, soonest first, the first 5 only', async () => {
    const grant = (days: number, points: number, credits = 0) => ({
      customer_identifier: '1',
      source: 'manual',
      points_amount: points,
      credits_amount: credits,
      expires_at: at(days),
    });
    // 70 lots at day 10: more than one page of the lots' index.
    const events = [
      ...Array.from({ length: 70 }, () => grant(10, 1)),
      grant(20, 5, 1.5),
      grant(5, 0, 2.25),
      grant(30, 7),
      grant(40, 8),
      grant(50, 9),
      grant(60, 10),
    ];
    events.push({ customer_identifier: '1', source: 'manual', points_amount: 1000, credits_amount: 0 } as never);
    expect((await postBatch(t, events)).statusCode).toBe(201);
    const data = await me();
    expect(data.upcoming_expiries).toEqual([
      { expires_at: at(5), points: 0, credits: 2.25 },
      { expires_at: at(10), points: 70, credits: 0 },
      { expires_at: at(20), points: 5, credits: 1.5 },
      { expires_at: at(30), points: 7, credits: 0 },
      { expires_at: at(40), points: 8, credits: 0 },
    ]);
    expect(data.next_expiry).toEqual({ expires_at: at(5), points: 0, credits: 2.25 });
  });

  it('leaves out what expired, before the sweep has written it off, and what was spent', async () => {
    expect((await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1', source: 'manual', points_amount: -20 } })).statusCode).toBe(
      201,
    );
    t.clock.advance(15 * DAY);
    const data = await me();
    expect(data.upcoming_expiries).toEqual([
      { expires_at: at(20), points: 5, credits: 1.5 },
      { expires_at: at(30), points: 7, credits: 0 },
      { expires_at: at(40), points: 8, credits: 0 },
      { expires_at: at(50), points: 9, credits: 0 },
      { expires_at: at(60), points: 10, credits: 0 },
    ]);
    expect(data.points_balance).toBe(1000 + 5 + 7 + 8 + 9 + 10);
    await expectConsistentLedger(t);
  });
});
