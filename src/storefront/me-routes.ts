import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { findCustomer } from '../customers/repository.js';
import { customersWritten } from '../earning/customers.js';
import { AppError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { DataEnvelope } from '../http/schemas.js';
import { eventJson } from '../ledger/event-json.js';
import { eventsQuery, type EventRow } from '../ledger/events-repository.js';
import { enqueueRecordEvents } from '../records/events.js';
import { recordsJson } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';
import { getShop } from '../shops/repository.js';
import { keptTiersOf, tiersOf } from '../tiers/tiers.js';
import { refused } from './customer-tokens.js';
import { meBody, meJson } from './me-json.js';
import { BirthdayInput, Me, MePointsEvent } from './schemas.js';
import { storefrontErrors, STOREFRONT_ROUTE } from './scope.js';

// The shopper's own account: what /me shows, their history, and the one field they may set.

const customerOf = (request: FastifyRequest) => request.customer!;

const JSON_TYPE = 'application/json; charset=utf-8';

export function registerMeRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/me',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: "The shopper's account",
        description: 'Balances, tier and progress, what expires next and at the next 5 expiry instants, the referral code and birthday.',
        response: { 200: DataEnvelope(Me), ...storefrontErrors('read') },
      },
    },
    // The shop and its tiers as the key that authenticated the request holds them (auth.ts).
    async (request, reply) => {
      const now = app.clock();
      const me = await meJson(request.db, request.shop, await keptTiersOf(request.db, request.shop.id), customerOf(request), now);
      // A string with a JSON type is sent as it is, not through the serialiser (me-json.ts).
      return reply.type(JSON_TYPE).send(meBody(me) as never);
    },
  );

  app.get(
    '/me/points_events',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: "The shopper's points history",
        description: "The customer's points events, with cursor or offset pagination.",
        querystring: ListQuery([]),
        response: { 200: ListEnvelope(MePointsEvent), ...storefrontErrors('list') },
      },
    },
    async (request) => {
      const query = eventsQuery(request.db, request.shop.id, { customerRemoteId: Number(customerOf(request).remote_id) });
      return paginate(request.db, request, query, {
        idColumn: 'points_events.id',
        sortable: {},
        toJson: (rows: EventRow[]) => rows.map((row) => eventJson(row, null, row.reversed_by_event_id)),
      });
    },
  );

  app.put(
    '/me/birthday',
    {
      schema: {
        ...STOREFRONT_ROUTE,
        summary: "Set the shopper's birthday",
        description:
          'Sets the birthday while it is unset; once set, 409 `birthday_already_set` (the merchant can still change it with PUT /customers/{remote_id}).',
        body: BirthdayInput,
        response: {
          200: DataEnvelope(Me),
          ...storefrontErrors('write', ['birthday_already_set'], {
            409: { name: 'BirthdayAlreadySet', description: 'The birthday is already set, or a request with this Idempotency-Key is still running' },
          }),
        },
      },
    },
    async (request, reply) => {
      const { birthday } = request.body;
      const shopId = request.shop.id;
      const remoteId = Number(customerOf(request).remote_id);
      return runWrite(request, reply, async (trx) => {
        const now = app.clock();
        const before = await findCustomer(trx, shopId, String(remoteId), { lock: true });
        // Erased since the request was authenticated.
        if (before === undefined) throw refused();
        if (before.birthday !== null) throw new AppError('birthday_already_set', 'The birthday is already set; ask the shop to change it');
        await trx.updateTable('customers').set({ birthday, updated_at: now }).where('shop_id', '=', shopId).where('remote_id', '=', remoteId).execute();
        await customersWritten(trx, shopId, [{ remoteId, created: false, birthdayBefore: null, birthday }], now);
        const row = (await findCustomer(trx, shopId, String(remoteId)))!;
        const [record] = await recordsJson(trx, shopId, customers, [row], now);
        await enqueueRecordEvents(trx, shopId, customers, [{ created: false, record: record! }], now);
        const [shop, tiers] = await Promise.all([getShop(trx, shopId), tiersOf(trx, shopId)]);
        return { status: 200, body: { data: await meJson(trx, shop!, tiers, row, now) } };
      });
    },
  );
}
