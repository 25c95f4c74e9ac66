import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postBatch } from '../ledger/fixtures.js';
import { pointsReport } from './fixtures.js';

// The shop's timezone decides the days of its reports, exactly: a half-hour offset, a day of 23
// hours, and a change of timezone that moves the whole history to the new days.

describe(`the days of a report are the shop's local days (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup({ now: Date.UTC(2026, 3, 15, 12) });
    await createCustomers(t, 1);
  });
  afterAll(() => t?.close());

  const setZone = (timezone: string) => t.request('PATCH', `${API}/shop`, { body: { timezone } });
  const grants = (events: [string, number][]) =>
    postBatch(
      t,
      events.map(([applied_at, points_amount]) => ({ customer_identifier: '1', source: 'manual', points_amount, applied_at })),
    );
  const earned = async (from: string, to: string) => (await pointsReport(t, from, to)).map((p) => [p.period_start, p.points_earned]);

  it('refuses a timezone the zone database does not know, and an offset', async () => {
    for (const timezone of ['Mars/Olympus', '+05:30', 'utc+1', '']) {
      const res = await setZone(timezone);
      expect(res.statusCode, timezone).toBe(422);
      expect(errorOf(res).details?.[0]).toMatchObject({ param: 'timezone' });
    }
    expect((await t.request('GET', `${API}/shop`)).json().data.timezone).toBe('UTC');
  });

  it('puts events either side of midnight in Asia/Kolkata (+05:30) on their own days', async () => {
    const res = await setZone('Asia/Kolkata');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.timezone).toBe('Asia/Kolkata');
    expect(
      (
        await grants([
          ['2026-01-09T18:29:59.999Z', 1],
          ['2026-01-09T18:30:00.000Z', 2],
        ])
      ).statusCode,
    ).toBe(201);
    expect(await earned('2026-01-09', '2026-01-10')).toEqual([
      ['2026-01-09', 1],
      ['2026-01-10', 2],
    ]);
  });

  it('puts events either side of both midnights of the day Europe/Berlin springs forward (23 hours) on their own days', async () => {
    expect((await setZone('Europe/Berlin')).statusCode).toBe(200);
    const res = await grants([
      ['2026-03-28T22:59:59.999Z', 4], // 23:59:59 CET on the 28th
      ['2026-03-28T23:00:00.000Z', 8], // 00:00 CET on the 29th
      ['2026-03-29T21:59:59.999Z', 16], // 23:59:59 CEST on the 29th
      ['2026-03-29T22:00:00.000Z', 32], // 00:00 CEST on the 30th
    ]);
    expect(res.statusCode, res.body).toBe(201);
    expect(await earned('2026-03-28', '2026-03-30')).toEqual([
      ['2026-03-28', 4],
      ['2026-03-29', 24],
      ['2026-03-30', 32],
    ]);
  });

  it('moves the history to the days of a new timezone', async () => {
    // In Berlin both Kolkata events are on the 9th; in UTC too; in Kolkata again apart.
    expect(await earned('2026-01-09', '2026-01-10')).toEqual([
      ['2026-01-09', 3],
      ['2026-01-10', 0],
    ]);
    expect((await setZone('UTC')).statusCode).toBe(200);
    expect(await earned('2026-03-28', '2026-03-30')).toEqual([
      ['2026-03-28', 12],
      ['2026-03-29', 48],
      ['2026-03-30', 0],
    ]);
    expect((await setZone('Asia/Kolkata')).statusCode).toBe(200);
    expect(await earned('2026-01-09', '2026-01-10')).toEqual([
      ['2026-01-09', 1],
      ['2026-01-10', 2],
    ]);
    await expectConsistentLedger(t);
  });
});
