import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { registerCustomerList } from '../customers/sub-lists.js';
import type { VipTierChangesTable } from '../db/tables.js';
import { ListQuery, paginate } from '../http/pagination.js';
import { TIER_METRICS } from '../shops/repository.js';
import { tierChangeJson, tierChangesQuery } from './tiers.js';

const TierRef = (description: string) =>
  Type.Union([Type.Object({ id: Type.Integer({ examples: [3] }), name: Type.Union([Type.String(), Type.Null()], { examples: ['Gold'] }) }), Type.Null()], {
    description,
  });

const TierChange = Type.Object(
  {
    id: Type.Integer({ examples: [77] }),
    from_tier: TierRef('The tier held before, with its name then; null for none'),
    to_tier: TierRef('The tier held after, with its name then; null for none'),
    metric: Type.Union([Type.Literal(TIER_METRICS[0]), Type.Literal(TIER_METRICS[1]), Type.Literal(TIER_METRICS[2])], {
      description: "The shop's vip_tier_metric when the tier changed",
      examples: ['points_earned'],
    }),
    value: Type.Number({ description: 'The value in that metric the new tier was judged by (amount_spent in currency units)', examples: [5120] }),
    points_earned: Type.Integer({ description: 'The points earned the new tier was judged by; 0 when the metric was another', examples: [5120] }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'VipTierChange', title: 'VipTierChange' },
);

/** GET /customers/{customer_identifier}/vip_tier_history. */
export function registerTierRoutes(server: FastifyInstance): void {
  registerCustomerList(server, {
    path: 'vip_tier_history',
    scope: 'customers:read',
    tags: ['VIP tiers'],
    summary: "List a customer's VIP tier changes",
    description: "Every change of the customer's tier, oldest first, with cursor or offset pagination.",
    querystring: ListQuery([]),
    item: TierChange,
    page: (request, customerRemoteId) =>
      paginate(request.db, request, tierChangesQuery(request.db, request.shop.id, customerRemoteId), {
        idColumn: 'id',
        sortable: {},
        toJson: (rows: VipTierChangesTable[]) => rows.map(tierChangeJson),
      }),
  });
}
