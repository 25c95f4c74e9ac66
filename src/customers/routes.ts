import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { isoTime } from '../clock.js';
import { isUniqueViolation } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { AppError, notFound, validationError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { balancesOf, creditsToNumber, ZERO_BALANCE } from '../ledger/balances.js';
import { emailTaken, findCustomer, parseRemoteId, type CustomerRow } from './repository.js';

const NullableString = (max: number, extra: object = {}) => Type.Union([Type.String({ maxLength: max, ...extra }), Type.Null()]);

export const Customer = Type.Object(
  {
    remote_id: Type.Integer({ description: 'The customer\'s ID in the commerce platform', examples: [7012345678] }),
    email: Type.Union([Type.String(), Type.Null()], { examples: ['ada@example.com'] }),
    first_name: Type.Union([Type.String(), Type.Null()], { examples: ['Ada'] }),
    last_name: Type.Union([Type.String(), Type.Null()], { examples: ['Lovelace'] }),
    phone: Type.Union([Type.String(), Type.Null()]),
    birthday: Type.Union([Type.String({ format: 'date' }), Type.Null()]),
    points_balance: Type.Integer({ description: 'Points available now (unexpired lots)', examples: [1250] }),
    credits_balance: Type.Number({ description: 'Store credit available now, to the hundredth', examples: [12.5] }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Customer', title: 'Customer' },
);

export const CustomerInput = Type.Object(
  {
    email: Type.Optional(NullableString(254, { format: 'email' })),
    first_name: Type.Optional(NullableString(255)),
    last_name: Type.Optional(NullableString(255)),
    phone: Type.Optional(NullableString(64)),
    birthday: Type.Optional(Type.Union([Type.String({ format: 'date' }), Type.Null()])),
  },
  { additionalProperties: false, examples: [{ email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' }] },
);
type CustomerInput = Static<typeof CustomerInput>;

export async function customerJson(db: DB, shopId: number, rows: CustomerRow[], now: number): Promise<Static<typeof Customer>[]> {
  const balances = await balancesOf(db, shopId, rows.map((r) => Number(r.remote_id)), now);
  return rows.map((row) => {
    const balance = balances.get(Number(row.remote_id)) ?? ZERO_BALANCE;
    return {
      remote_id: Number(row.remote_id),
      email: row.email,
      first_name: row.first_name,
      last_name: row.last_name,
      phone: row.phone,
      birthday: row.birthday,
      points_balance: balance.points,
      credits_balance: creditsToNumber(balance.credits),
      created_at: isoTime(Number(row.created_at)),
      updated_at: isoTime(Number(row.updated_at)),
    };
  });
}

const emailInUse = () => validationError([{ param: 'email', code: 'email_taken', message: 'Another customer of this shop already has this e-mail' }]);

async function upsertCustomer(db: DB, shopId: number, remoteId: number, input: CustomerInput, now: number): Promise<{ row: CustomerRow; created: boolean }> {
  const email = input.email ?? null;
  if (email !== null && (await emailTaken(db, shopId, email, remoteId))) throw emailInUse();
  const fields = {
    email,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    phone: input.phone ?? null,
    birthday: input.birthday ?? null,
  };
  const existing = await db.selectFrom('customers').select('created_at').where('shop_id', '=', shopId).where('remote_id', '=', remoteId).executeTakeFirst();
  try {
    const row = await db
      .insertInto('customers')
      .values({ shop_id: shopId, remote_id: remoteId, ...fields, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['shop_id', 'remote_id']).doUpdateSet({ ...fields, updated_at: now }))
      .returningAll()
      .executeTakeFirstOrThrow();
    return { row, created: existing === undefined };
  } catch (error) {
    if (isUniqueViolation(error)) throw emailInUse();
    throw error;
  }
}

const RemoteIdParams = Type.Object({ remote_id: Type.String({ description: 'The customer\'s ID in the commerce platform', examples: ['7012345678'] }) });
const IdentifierParams = Type.Object({
  customer_identifier: Type.String({ description: 'The customer\'s remote_id, or e-mail address (case-insensitive)', examples: ['7012345678', 'ada@example.com'] }),
});

export function registerCustomerRoutes(app: FastifyInstance): void {
  app.put(
    '/customers/:remote_id',
    {
      schema: {
        tags: ['Customers'],
        summary: 'Create or replace a customer',
        description: 'Upserts the customer synced from the commerce platform. Fields left out are cleared. Answers 201 when the customer is new, 200 when it existed.',
        params: RemoteIdParams,
        body: CustomerInput,
        response: { 200: DataEnvelope(Customer), 201: DataEnvelope(Customer), ...errorResponses('write') },
      },
    },
    async (request, reply) => {
      const { remote_id } = request.params as Static<typeof RemoteIdParams>;
      const remoteId = parseRemoteId(remote_id);
      if (remoteId === null) {
        throw new AppError('invalid_parameter', 'remote_id must be a positive integer', {
          details: [{ param: 'remote_id', code: 'invalid_format', message: 'remote_id must be a positive integer below 2^53' }],
        });
      }
      return runWrite(request, reply, async (trx) => {
        const now = app.clock();
        const { row, created } = await upsertCustomer(trx, request.shop.id, remoteId, (request.body ?? {}) as CustomerInput, now);
        const [data] = await customerJson(trx, request.shop.id, [row], now);
        return { status: created ? 201 : 200, body: { data } };
      });
    },
  );

  app.get(
    '/customers/:customer_identifier',
    {
      schema: {
        tags: ['Customers'],
        summary: 'Retrieve a customer, with balances',
        params: IdentifierParams,
        response: { 200: DataEnvelope(Customer), ...errorResponses('read', { 404: 'No such customer in this shop' }) },
      },
    },
    async (request) => {
      const { customer_identifier } = request.params as Static<typeof IdentifierParams>;
      const row = await findCustomer(app.db, request.shop.id, customer_identifier);
      if (row === undefined) throw notFound('customer', customer_identifier);
      const [data] = await customerJson(app.db, request.shop.id, [row], app.clock());
      return { data };
    },
  );
}
