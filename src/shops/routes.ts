import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { isoTime } from '../clock.js';
import { undescribed } from '../core/validation.js';
import { validationError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { getShop, TIER_METRICS, TIER_WINDOWS, updateShop, type Shop as ShopRow, type ShopSettings } from './repository.js';
import { ExpiryFields, ExpiryUpdateFields } from './expiry-settings.js';
import { shopSettingErrors } from './settings.js';
import { rekeyDays } from '../ledger/totals.js';

const VipTierWindow = Type.Union([Type.Literal(TIER_WINDOWS[0]), Type.Literal(TIER_WINDOWS[1]), Type.Literal(TIER_WINDOWS[2])], {
  description:
    'VIP tiers are judged by the points earned over the lifetime, this calendar year (UTC), or the last 12 months; a change re-tiers customers in the background',
  examples: ['lifetime'],
});

const VipTierMetric = Type.Union([Type.Literal(TIER_METRICS[0]), Type.Literal(TIER_METRICS[1]), Type.Literal(TIER_METRICS[2])], {
  description:
    "What VIP tiers' thresholds are in: points earned, amount spent (paid order totals less refunds, orders in the shop's currency, in whole units) " +
    'or orders paid (refunded ones not), over vip_tier_window; a change re-tiers customers in the background',
  examples: ['points_earned'],
});
const RetentionDays = Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()], {
  description: 'Days a customer who drops below their tier keeps it (vip_tier_retained_until); null: they move at once',
  examples: [90],
});
const Currency = Type.Union([Type.String({ pattern: '^[A-Z]{3}$' }), Type.Null()], {
  description: 'ISO 4217 code of the orders amount_spent counts (others count for orders_count only); required for that metric',
  examples: ['EUR'],
});
const RestoreRedeemed = Type.Boolean({
  description: 'Whether a refunded, voided or cancelled order voids the redemption whose code it used (discount_codes), giving its points back',
});

export const Shop = Type.Object(
  {
    id: Type.Integer({ examples: [1] }),
    name: Type.String({ examples: ['Acme Coffee'] }),
    per_event_expiry: Type.Boolean({ description: 'Whether points events may set their own expires_at' }),
    points_expiry_days: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'Days after applied_at that granted points and credits expire; null means never',
      examples: [365],
    }),
    points_pending_days: Type.Integer({
      minimum: 0,
      description: 'Days after an order is placed before the points it earns can be spent (shown as points_pending until then); 0 means at once',
      examples: [14],
    }),
    vip_tier_window: VipTierWindow,
    vip_tier_metric: VipTierMetric,
    vip_tier_retention_days: RetentionDays,
    currency: Currency,
    restore_redeemed_points_on_refund: RestoreRedeemed,
    timezone: Type.String({ description: 'IANA zone of the days of reports', examples: ['Europe/Berlin'] }),
    ...ExpiryFields,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Shop', title: 'Shop' },
);

export const ShopUpdate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, examples: ['Acme Coffee'] })),
    per_event_expiry: Type.Optional(Type.Boolean()),
    points_expiry_days: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 36500 }), Type.Null()])),
    points_pending_days: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
    vip_tier_window: Type.Optional(undescribed(VipTierWindow)),
    vip_tier_metric: Type.Optional(undescribed(VipTierMetric)),
    vip_tier_retention_days: Type.Optional(undescribed(RetentionDays)),
    currency: Type.Optional(undescribed(Currency)),
    restore_redeemed_points_on_refund: Type.Optional(undescribed(RestoreRedeemed)),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone of the days of reports', examples: ['Europe/Berlin'] })),
    ...ExpiryUpdateFields,
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'The settings to change, each as the Shop object describes it; the others keep their values',
    examples: [{ per_event_expiry: true, points_expiry_days: 365 }],
  },
);

export function shopJson(shop: ShopRow): Static<typeof Shop> {
  const { vip_tier_basis: _basis, ...shown } = shop;
  const since = shop.points_inactivity_since;
  return {
    ...shown,
    points_inactivity_since: since === null ? null : isoTime(since),
    created_at: isoTime(shop.created_at),
    updated_at: isoTime(shop.updated_at),
  };
}

export function registerShopRoutes(server: FastifyInstance): void {
  // Request types follow from each route's schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/shop',
    {
      config: { scope: 'shop:read' },
      schema: { tags: ['Shop'], summary: 'Retrieve the shop', response: { 200: DataEnvelope(Shop), ...errorResponses('read') } },
    },
    // Read afresh: the request's shop comes from the token cache and may be a moment old.
    async (request) => ({ data: shopJson((await getShop(request.db, request.shop.id)) ?? request.shop) }),
  );

  app.patch(
    '/shop',
    {
      config: { scope: 'shop:write' },
      schema: {
        tags: ['Shop'],
        summary: "Update the shop's settings",
        description:
          'Expiry and pending settings apply to points events created afterwards; existing lots keep their expiry. A new vip_tier_window, ' +
          'vip_tier_metric or currency re-tiers every customer in the background. A new timezone moves the days of reports. Switching ' +
          'points_expiry_mode to inactivity, or changing points_inactivity_days, starts a grace: no balance falls due before a full period afterwards.',
        body: ShopUpdate,
        response: { 200: DataEnvelope(Shop), ...errorResponses('write') },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, async (trx, audit) => {
        const before = (await getShop(trx, request.shop.id))!;
        const errors = shopSettingErrors(request.body as ShopSettings, before);
        if (errors.length > 0) throw validationError(errors);
        audit.before = shopJson(before);
        const shop = await updateShop(trx, request.shop.id, request.body, app.clock(), rekeyDays);
        return { status: 200, body: { data: shopJson(shop!) } };
      }),
  );
}
