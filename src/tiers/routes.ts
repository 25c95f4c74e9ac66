import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { findCustomer } from '../customers/repository.js';
import type { VipTierChangesTable } from '../db/tables.js';
import { notFound } from '../errors.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { errorResponses, notFoundError } from '../http/schemas.js';
import { tierChangeJson } from './tiers.js';

const TierRef = (description: string) =>
  Type.Union([Type.Object({ id: Type.Integer({ examples: [3] }), name: Type.Union([Type.String(), Type.Null()], { examples: ['Gold'] }) }), Type.Null()], { description });

const TierChange = Type.Object(
  {
    id: Type.Integer({ examples: [77] }),
    from_tier: TierRef('The tier held before, with its name then; null for none'),
    to_tier: TierRef('The tier held after, with its name then; null for none'),
    points_earned: Type.Integer({ description: 'The points earned the new tier was judged by', examples: [5120] }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'VipTierChange', title: 'VipTierChange' },
);

const CustomerParams = Type.Object({
  customer_identifier: Type.String({ description: 'The customer\'s remote_id, or e-mail address (case-insensitive)', examples: ['7012345678', 'ada@example.com'] }),
});

/** GET /customers/{customer_identifier}/vip_tier_history. */
export function registerTierRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/customers/:customer_identifier/vip_tier_history',
    {
      schema: {
        tags: ['VIP tiers'],
        summary: 'List a customer\'s VIP tier changes',
        description: 'Every change of the customer\'s tier, oldest first, with cursor or offset pagination.',
        params: CustomerParams,
        querystring: ListQuery([]),
        response: { 200: ListEnvelope(TierChange), ...errorResponses('list', { 404: notFoundError('customer') }) },
      },
    },
    async (request) => {
      const { customer_identifier } = request.params;
      const customer = await findCustomer(request.db, request.shop.id, customer_identifier);
      if (customer === undefined) throw notFound('customer', customer_identifier);
      const query = request.db.selectFrom('vip_tier_changes').selectAll().where('shop_id', '=', request.shop.id).where('customer_remote_id', '=', Number(customer.remote_id));
      return paginate(request.db, request, query, { idColumn: 'id', sortable: {}, toJson: (rows: VipTierChangesTable[]) => rows.map(tierChangeJson) });
    },
  );
}
