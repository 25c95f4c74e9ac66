import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { expectConsistentLedger } from '../ledger/fixtures.js';

// One name for a customer (README, "Using the API"): every body that references a customer by its
// remote_id also takes `customer_identifier`, a remote_id or an e-mail, stored as the field it
// stands for. The same cases run against each such body.

type Fields = Record<string, unknown>;

interface Body {
  route: string;
  /** The field customer_identifier stands for, as stored and shown. */
  field: string;
  /** A remote_id that names no customer: accepted as the field accepts it, or customer_not_found. */
  unknownRemoteId: 'accepted' | 'customer_not_found';
  /** Sending neither: accepted (the field is nullable), or missing. */
  neither: 'accepted' | 'missing';
  send(t: TestContext, fields: Fields): ReturnType<TestContext['request']>;
}

let serial = 0;
const BODIES: Body[] = [
  {
    route: 'PUT /orders/{remote_id}',
    field: 'customer_remote_id',
    unknownRemoteId: 'accepted',
    neither: 'accepted',
    send: (t, fields) =>
      t.request('PUT', `${API}/orders/${++serial}`, {
        body: { total: 20, currency: 'EUR', financial_status: 'pending', placed_at: '2026-01-15T10:00:00Z', ...fields },
      }),
  },
  {
    route: 'PUT /subscription_contracts/{remote_id}',
    field: 'customer_remote_id',
    unknownRemoteId: 'accepted',
    neither: 'missing',
    send: (t, fields) =>
      t.request('PUT', `${API}/subscription_contracts/${++serial}`, { body: { status: 'active', next_billing_date: '2026-02-01T00:00:00Z', ...fields } }),
  },
  {
    route: 'POST /referrals',
    field: 'referrer_remote_id',
    unknownRemoteId: 'customer_not_found',
    neither: 'missing',
    send: (t, fields) => t.request('POST', `${API}/referrals`, { body: { referred_email: `friend${++serial}@example.com`, ...fields } }),
  },
];

const ADA = 101;
const GRACE = 102;

describe(`customer_identifier in bodies that reference a customer (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    for (const [id, email] of [
      [ADA, 'Ada@Example.com'],
      [GRACE, 'grace@example.com'],
    ] as const) {
      expect((await t.request('PUT', `${API}/customers/${id}`, { body: { email } })).statusCode).toBe(201);
    }
  });
  afterAll(() => t.close());

  const details = (res: Awaited<ReturnType<TestContext['request']>>) => {
    expect(res.statusCode, res.body).toBe(422);
    return errorOf(res).details;
  };

  describe.each(BODIES.map((b) => [b.route, b] as const))('%s', (_route, b) => {
    const stored = async (fields: Fields) => {
      const res = await b.send(t, fields);
      expect(res.statusCode, res.body).toBe(201);
      const data = res.json().data;
      expect(data).not.toHaveProperty('customer_identifier');
      return data[b.field];
    };

    it('names the customer by remote_id, given as a string', async () => {
      expect(await stored({ customer_identifier: String(ADA) })).toBe(ADA);
    });

    it('names the customer by e-mail, whatever its case', async () => {
      expect(await stored({ customer_identifier: 'ADA@example.COM' })).toBe(ADA);
      expect(await stored({ customer_identifier: ' grace@EXAMPLE.com ' })).toBe(GRACE);
    });

    it(`accepts ${b.field} beside it when both name the same customer`, async () => {
      expect(await stored({ [b.field]: ADA, customer_identifier: 'ada@example.com' })).toBe(ADA);
      expect(await stored({ [b.field]: GRACE, customer_identifier: String(GRACE) })).toBe(GRACE);
    });

    it(`refuses ${b.field} beside it when they name different customers`, async () => {
      for (const identifier of ['ada@example.com', String(ADA)]) {
        expect(details(await b.send(t, { [b.field]: GRACE, customer_identifier: identifier }))).toEqual([
          {
            param: 'customer_identifier',
            code: 'conflicting_parameters',
            message: `customer_identifier names customer ${ADA} but ${b.field} is ${GRACE}; give one of them, or both naming the same customer`,
          },
        ]);
      }
    });

    it('refuses an e-mail that names no customer, and a text that is neither', async () => {
      expect(details(await b.send(t, { customer_identifier: 'nobody@example.com' }))).toEqual([
        { param: 'customer_identifier', code: 'customer_not_found', message: 'No customer with remote_id or e-mail "nobody@example.com"' },
      ]);
      expect(details(await b.send(t, { customer_identifier: 'ada' }))).toEqual([
        expect.objectContaining({ param: 'customer_identifier', code: 'invalid_format' }),
      ]);
      expect(details(await b.send(t, { customer_identifier: '' }))).toEqual([expect.objectContaining({ param: 'customer_identifier', code: 'blank' })]);
      expect(details(await b.send(t, { customer_identifier: ADA }))).toEqual([expect.objectContaining({ param: 'customer_identifier', code: 'invalid_type' })]);
    });

    it(`treats a remote_id that names no customer as ${b.field} does`, async () => {
      if (b.unknownRemoteId === 'accepted') {
        expect(await stored({ customer_identifier: '999' })).toBe(999);
      } else {
        expect(details(await b.send(t, { customer_identifier: '999' }))).toEqual([
          expect.objectContaining({ param: 'customer_identifier', code: 'customer_not_found' }),
        ]);
      }
    });

    it(`asks for ${b.field} or customer_identifier when it needs a customer`, async () => {
      if (b.neither === 'accepted') {
        expect(await stored({})).toBeNull();
      } else {
        const [missing] = details(await b.send(t, {}))!;
        expect(missing).toMatchObject({ param: b.field, code: 'missing' });
        expect(missing!.message).toContain('customer_identifier');
      }
    });
  });

  it("reports a customer_identifier that names no customer beside the other fields' errors", async () => {
    const res = await BODIES[0]!.send(t, { customer_identifier: 'nobody@example.com', total: 1.234, currency: 'eur' });
    expect(details(res)!.map((d) => [d.param, d.code])).toEqual([
      ['currency', 'invalid_format'],
      ['total', 'invalid_amount'],
      ['customer_identifier', 'customer_not_found'],
    ]);
  });

  it('takes customer_remote_id null (a guest order) beside a customer_identifier as naming another customer', async () => {
    expect(details(await BODIES[0]!.send(t, { customer_remote_id: null, customer_identifier: 'ada@example.com' }))).toEqual([
      expect.objectContaining({ param: 'customer_identifier', code: 'conflicting_parameters', message: expect.stringContaining('customer_remote_id is null') }),
    ]);
  });

  it('documents customer_identifier in the request schemas and never in a record', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const request = (path: string, method: string) => doc.paths[`${API}${path}`][method].requestBody.content['application/json'].schema;
    for (const [path, method] of [
      ['/orders/{remote_id}', 'put'],
      ['/subscription_contracts/{remote_id}', 'put'],
      ['/referrals', 'post'],
    ] as const) {
      const identifier = request(path, method).properties.customer_identifier;
      expect(identifier, path).toMatchObject({ type: 'string', examples: ['ada@example.com', '7012345678'] });
      expect(identifier.description).toMatch(/remote_id .* or e-mail/);
    }
    expect(request('/subscription_contracts/{remote_id}', 'put').required).not.toContain('customer_remote_id');
    for (const schema of ['Order', 'SubscriptionContract', 'Referral'])
      expect(doc.components.schemas[schema].properties).not.toHaveProperty('customer_identifier');
  });

  it('leaves a ledger that loyalty verify finds consistent', () => expectConsistentLedger(t, null));
});
