import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantBirthdays } from '../../src/earning/jobs.js';
import { importRecords, readNdjson } from '../../src/records/import.js';
import { customers } from '../../src/records/resources/customers.js';
import { orders } from '../../src/records/resources/orders.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';

// Signup, birthday and subscription billing rules, and imports that earn or not
// (docs/earning.md). The `it` blocks share one shop and one clock, in order.

const START = Date.UTC(2026, 5, 10, 9);

describe(`earning rules beside orders (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: START });
    for (const body of [
      { kind: 'signup', points_amount: 25 },
      { kind: 'birthday', points_amount: 50, credits_amount: 2.5 },
      { kind: 'subscription_billing', points_amount: 10 },
      { kind: 'order', points_per_unit: 1, unit_amount: 1 },
    ]) {
      const res = await t.request('POST', `${API}/earning_rules`, { body });
      expect(res.statusCode, res.body).toBe(201);
    }
  });
  afterAll(() => t.close());

  const put = (id: number, body: Record<string, unknown>) => t.request('PUT', `${API}/customers/${id}`, { body });
  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const events = async (id: number) => (await t.request('GET', `${API}/customers/${id}/points_events`, { query: { 'pagination[limit]': '50' } })).json().data;

  it("grants the signup rule once, when a customer is created, and shows it in the PUT's answer", async () => {
    const created = await put(1, { email: 'ada@example.com' });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ points_balance: 25, points_earned_lifetime: 25 });
    expect((await put(1, { email: 'ada@example.com', first_name: 'Ada' })).statusCode).toBe(200);
    expect(await customer(1)).toMatchObject({ points_balance: 25 });
    expect(await events(1)).toEqual([expect.objectContaining({ source: 'signup', points_amount: 25, earning_rule_id: expect.any(Number) })]);
  });

  it('grants the birthday rule once a calendar year on the day, and catches up a day the server missed', async () => {
    // Birthday in two days (12 June).
    await put(2, { email: 'bday@example.com', birthday: '1990-06-12' });
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(0);
    t.clock.advance(2 * DAY);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(1);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(0);
    expect(await customer(2)).toMatchObject({ points_balance: 75, credits_balance: 2.5 });
    // Changing the birthday to a later day this year grants nothing more this year.
    await put(2, { email: 'bday@example.com', birthday: '1990-07-01' });
    t.clock.advance(30 * DAY);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(0);
    expect(await customer(2)).toMatchObject({ points_balance: 75 });
    // Next year, the job did not run on the day: three days later it grants, once.
    t.clock.now = Date.UTC(2027, 6, 4, 9);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(1);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(0);
    expect((await events(2)).filter((e: { source: string }) => e.source === 'birthday').map((e: { internal_note: string }) => e.internal_note)).toEqual([
      'Birthday 2026',
      'Birthday 2027',
    ]);
  });

  it('grants the subscription_billing rule for each succeeded billing attempt', async () => {
    await put(3, { email: 'sub@example.com' });
    const contract = await t.request('PUT', `${API}/subscription_contracts/500`, {
      body: { customer_remote_id: 3, status: 'active', next_billing_date: '2027-08-01T00:00:00Z' },
    });
    expect(contract.statusCode, contract.body).toBe(201);
    for (const status of ['succeeded', 'failed', 'succeeded']) {
      const res = await t.request('POST', `${API}/memberships/subscription_billing_attempts`, {
        body: { subscription_contract_remote_id: 500, status, amount: 19.9, currency: 'EUR' },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    expect(await customer(3)).toMatchObject({ points_balance: 25 + 20 });
    expect((await events(3)).map((e: { source: string }) => e.source)).toEqual(['signup', 'subscription_billing', 'subscription_billing']);
  });

  it('imports with the same rules as PUT, unless told not to earn', async () => {
    const lines = (ids: number[]) => Readable.from([ids.map((id) => JSON.stringify({ remote_id: id, email: `imported${id}@example.com` })).join('\n')]);
    const earned = await importRecords(t.database.db, t.shop.id, customers, readNdjson(lines([10, 11])), t.clock.now, t.config);
    expect(earned.imported).toBe(2);
    expect(await customer(10)).toMatchObject({ points_balance: 25 });
    const plain = await importRecords(t.database.db, t.shop.id, customers, readNdjson(lines([12])), t.clock.now, t.config, { earn: false });
    expect(plain.imported).toBe(1);
    expect(await customer(12)).toMatchObject({ points_balance: 0 });

    const order = (id: number, customerId: number) =>
      JSON.stringify({
        remote_id: id,
        customer_remote_id: customerId,
        total: 30,
        currency: 'EUR',
        financial_status: 'paid',
        placed_at: '2027-07-01T00:00:00Z',
      });
    await importRecords(t.database.db, t.shop.id, orders, readNdjson(Readable.from([`${order(900, 10)}\n${order(901, 10)}`])), t.clock.now, t.config);
    expect(await customer(10)).toMatchObject({ points_balance: 25 + 60 });
    await importRecords(t.database.db, t.shop.id, orders, readNdjson(Readable.from([order(902, 12)])), t.clock.now, t.config, { earn: false });
    expect(await customer(12)).toMatchObject({ points_balance: 0 });
    // Re-importing changes nothing twice.
    await importRecords(t.database.db, t.shop.id, orders, readNdjson(Readable.from([`${order(900, 10)}\n${order(901, 10)}`])), t.clock.now, t.config);
    expect(await customer(10)).toMatchObject({ points_balance: 85 });
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
