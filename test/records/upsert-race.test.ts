import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

describe(`racing upserts (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('answers exactly one 201 when ten PUTs create the same record at once', async () => {
    for (const [path, body] of [
      ['customers/32000', { first_name: 'Racer' }],
      ['orders/32000', { total: 10, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-10T10:00:00Z' }],
    ] as const) {
      const responses = await Promise.all(Array.from({ length: 10 }, () => t.request('PUT', `${API}/${path}`, { body })));
      const statuses = responses.map((r) => r.statusCode).sort();
      expect(statuses, path).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    }
  });
});
