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
    pending: Type.Boolean({ description: 'Whether the points would be pending first (the shop has points_pending_days)', examples: [false] }),
  },
  { $id: 'EarningPreview', title: 'EarningPreview' },
);

/** POST /earning_rules/preview: what an order would earn, writing nothing. */
export function registerEarningRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/earning_rules/preview',
    {
      config: { scope: 'earning_rules:read', readOnly: true },
      schema: {
        tags: ['Earning rules'],
        summary: 'Preview what an order would earn',
        description: "Applies the shop's enabled order earning rule to a total for the customer, as PUT /orders would once the order is paid. Writes nothing.",
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
      const earning = orderEarning(rule, Math.round(cents), currency, multiplier);
      // The shop's settings as they are now (the request's shop may be a moment old).
      const shop = await getShop(request.db, request.shop.id);
      return {
        data: {
          points: earning.points,
          credits: creditsToNumber(earning.credits),
          earning_rule_id: rule?.id ?? null,
          multiplier,
          pending: (shop?.points_pending_days ?? 0) > 0 && earning.points > 0,
        },
      };
    },
  );
}
