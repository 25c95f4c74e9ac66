import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { grantBirthdays } from '../../src/earning/jobs.js';
import { importRecords, readNdjson } from '../../src/records/import.js';
import { customers } from '../../src/records/resources/customers.js';
import { API, DAY, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// What an import writes in its insert for new customers, as a PUT would give them afterwards:
// referral codes drawn without a look-up (a clash with a stored code makes the batch write
// again) and the first birthday grant.

// The codes the next draws return, in order, before random ones again.
const forced = vi.hoisted(() => [] as string[][]);

vi.mock('../../src/core/codes.js', async (actual) => {
  const codes = await actual<typeof import('../../src/core/codes.js')>();
  return {
    ...codes,
    generateCodes: vi.fn((count: number, prefix: string | null = null) => forced.shift() ?? codes.generateCodes(count, prefix)),
  };
});

const START = Date.UTC(2026, 5, 10, 9);

describe(`import of new customers (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: START });
    const res = await t.request('POST', `${API}/earning_rules`, { body: { kind: 'birthday', points_amount: 50 } });
    expect(res.statusCode, res.body).toBe(201);
  });
  afterAll(() => t.close());

  const customer = async (id: number) => (await t.request('GET', `${API}/customers/${id}`)).json().data;
  const lines = (rows: Record<string, unknown>[]) => readNdjson(Readable.from([rows.map((row) => JSON.stringify(row)).join('\n')]));

  it("draws a new customer's referral code again when a stored customer holds it, and writes the batch again", async () => {
    const stored = (await t.request('PUT', `${API}/customers/1`, { body: { email: 'ada@example.com' } })).json().data.referral_code as string;
    forced.push([stored, 'CLASHFREE234']);
    const result = await importRecords(
      t.database.db,
      t.shop.id,
      customers,
      lines([
        { remote_id: 2, email: 'grace@example.com' },
        { remote_id: 3, email: 'alan@example.com' },
      ]),
      t.clock.now,
      t.config,
    );
    expect(result).toEqual({ imported: 2, rejected: [] });
    expect(forced).toEqual([]);
    expect((await customer(1)).referral_code).toBe(stored);
    const codes = [(await customer(2)).referral_code, (await customer(3)).referral_code];
    expect(codes).not.toContain(stored);
    expect(codes).not.toContain('CLASHFREE234');
    expect(new Set(codes).size).toBe(2);
    // Written once: each customer and its code counted once.
    const list = (await t.request('GET', `${API}/customers`)).json().data as { remote_id: number }[];
    expect(list.map((c) => c.remote_id)).toEqual([1, 2, 3]);
  });

  it('schedules the birthday grant of an imported customer as a PUT does', async () => {
    // Birthdays in two days (12 June) and, for one, already past this year (1 June).
    await t.request('PUT', `${API}/customers/4`, { body: { email: 'put@example.com', birthday: '1990-06-12' } });
    const result = await importRecords(
      t.database.db,
      t.shop.id,
      customers,
      lines([
        { remote_id: 5, email: 'imported@example.com', birthday: '1990-06-12' },
        { remote_id: 6, email: 'past@example.com', birthday: '1990-06-01' },
        { remote_id: 7, email: 'none@example.com' },
      ]),
      t.clock.now,
      t.config,
    );
    expect(result).toEqual({ imported: 3, rejected: [] });
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(0);
    t.clock.advance(2 * DAY);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(2);
    expect(await customer(4)).toMatchObject({ points_balance: 50 });
    expect(await customer(5)).toMatchObject({ points_balance: 50 });
    expect(await customer(6)).toMatchObject({ points_balance: 0 });
    // The one whose birthday had passed is granted next year, on the day.
    t.clock.now = Date.UTC(2027, 5, 1, 9);
    expect(await grantBirthdays(t.database.db, t.clock.now)).toBe(1);
    expect(await customer(6)).toMatchObject({ points_balance: 50 });
    expect(await customer(7)).toMatchObject({ points_balance: 0 });
  });
});
