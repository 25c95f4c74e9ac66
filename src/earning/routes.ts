import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { findCustomer } from '../customers/repository.js';
import { validationError } from '../errors.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { creditsToNumber } from '../ledger/balances.js';
import { getShop } from '../shops/repository.js';
import { tiersOf } from '../tiers/tiers.js';
import { orderEarning, enabledRule } from './rules.js';
import { parseTime } from '../clock.js';
import { registerAction } from '../http/actions.js';
import { derive, recordsJson } from '../records/resource.js';
import { campaigns } from '../records/resources/campaigns.js';
import { shownRecord } from '../records/repository.js';
import { campaignsDuring, campaignsFor, cancelCampaign } from './campaigns.js';
import { registerActionRoutes } from './action-routes.js';

const PreviewInput = Type.Object(
  {
    customer_identifier: Type.String({
      minLength: 1,
      maxLength: 254,
      description: "The customer's remote_id or e-mail address",
      examples: ['ada@example.com'],
    }),
    total: Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'The order total, in currency', examples: [59.9] }),
    currency: Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 currency code', examples: ['EUR'] }),
    placed_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the order is placed, for the campaigns running then; now when left out',
        examples: ['2026-06-06T10:00:00Z'],
      }),
    ),
  },
  { additionalProperties: false, examples: [{ customer_identifier: 'ada@example.com', total: 59.9, currency: 'EUR' }] },
);

const Preview = Type.Object(
  {
    points: Type.Integer({ description: 'Points the order would earn', examples: [59] }),
    credits: Type.Number({ description: 'Store credit it would earn', examples: [0] }),
    earning_rule_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The enabled order rule that applies; null when the shop has none',
      examples: [3],
    }),
    multiplier: Type.Number({ description: "The customer's VIP earning multiplier", examples: [1] }),
    campaign_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The campaign the order would earn under (the running one for the customer that gives the most); null when none gives more',
      examples: [null],
    }),
    pending: Type.Boolean({ description: 'Whether the points would be pending first (the shop has points_pending_days)', examples: [false] }),
  },
  { $id: 'EarningPreview', title: 'EarningPreview' },
);

/** POST /earning_rules/preview: what an order would earn, writing nothing; POST /campaigns/{id}/cancel. */
export function registerEarningRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  registerActionRoutes(server);
  app.post(
    '/earning_rules/preview',
    {
      config: { scope: 'earning_rules:read', readOnly: true },
      schema: {
        tags: ['Earning rules'],
        summary: 'Preview what an order would earn',
        description:
          "Applies the shop's enabled order earning rule to a total for the customer, as PUT /orders would once the order is paid, with the campaign that would apply to an order placed at placed_at (now by default). Writes nothing.",
        body: PreviewInput,
        response: {
          200: DataEnvelope(Preview),
          // It writes nothing: no Idempotency-Key, so none of its errors.
          ...errorResponses('write', {
            400: { name: 'MalformedJson', description: 'Malformed JSON', codes: ['malformed_request'] },
            409: undefined,
            422: { name: 'PreviewRefused', description: 'Unknown customer, or invalid fields' },
          }),
        },
      },
    },
    async (request) => {
      const { customer_identifier, total, currency } = request.body;
      const placedAt = request.body.placed_at === undefined ? app.clock() : parseTime(request.body.placed_at);
      if (placedAt === null) {
        throw validationError([
          { param: 'placed_at', code: 'invalid_datetime', message: 'placed_at must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z' },
        ]);
      }
      const cents = total * 100;
      if (Math.abs(cents - Math.round(cents)) > 1e-6) {
        throw validationError([{ param: 'total', code: 'invalid_amount', message: 'total must have at most 2 decimals' }]);
      }
      const customer = await findCustomer(request.db, request.shop.id, customer_identifier);
      if (customer === undefined) {
        throw validationError([
          { param: 'customer_identifier', code: 'customer_not_found', message: `No customer with remote_id or e-mail ${JSON.stringify(customer_identifier)}` },
        ]);
      }
      const rule = await enabledRule(request.db, request.shop.id, 'order');
      const tier = (await tiersOf(request.db, request.shop.id)).find((t) => t.id === Number(customer.vip_tier_id));
      const multiplier = tier?.multiplier ?? 1;
      const running = campaignsFor(await campaignsDuring(request.db, request.shop.id, placedAt, placedAt), placedAt, tier?.id ?? null);
      const earning = orderEarning(rule, Math.round(cents), currency, multiplier, running);
      // The shop's settings as they are now (the request's shop may be a moment old).
      const shop = await getShop(request.db, request.shop.id);
      return {
        data: {
          points: earning.points,
          credits: creditsToNumber(earning.credits),
          earning_rule_id: rule?.id ?? null,
          multiplier,
          campaign_id: earning.campaignId ?? null,
          pending: (shop?.points_pending_days ?? 0) > 0 && earning.points > 0,
        },
      };
    },
  );
  registerAction(app, {
    path: '/campaigns/:id/cancel',
    scope: 'campaigns:write',
    singular: 'campaign',
    tags: ['Campaigns'],
    summary: 'Cancel a campaign',
    description:
      'Stops a scheduled or active campaign now: orders placed from now on no longer earn under it (orders placed while it ran still do). ' +
      'A campaign cancelled before it started announces neither campaign.started nor campaign.ended; one cancelled while active announces campaign.ended. ' +
      'Only a scheduled or active campaign can be cancelled (409 `campaign_not_cancellable`).',
    record: derive(campaigns).record,
    codes: ['campaign_not_cancellable'],
    conflict: { name: 'CampaignNotCancellable', description: 'Ended or already cancelled' },
    read: (trx, shopId, id, now) => shownRecord(trx, shopId, campaigns, id, now),
    run: async (trx, shopId, id, now) => (await recordsJson(trx, shopId, campaigns, [await cancelCampaign(trx, shopId, id, now)], now))[0],
  });
}
