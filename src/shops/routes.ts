import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { isoTime } from '../clock.js';
import { isTimeZone } from '../core/time-zones.js';
import { validationError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { getShop, TIER_WINDOWS, updateShop, type Shop as ShopRow } from './repository.js';
import { rekeyDays } from '../ledger/totals.js';

const VipTierWindow = Type.Union([Type.Literal(TIER_WINDOWS[0]), Type.Literal(TIER_WINDOWS[1]), Type.Literal(TIER_WINDOWS[2])], {
  description:
    'VIP tiers are judged by the points earned over the lifetime, this calendar year (UTC), or the last 12 months; a change re-tiers customers in the background',
  examples: ['lifetime'],
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
    timezone: Type.String({ description: 'IANA zone of the days of reports', examples: ['Europe/Berlin'] }),
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
    vip_tier_window: Type.Optional(VipTierWindow),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA zone of the days of reports', examples: ['Europe/Berlin'] })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ per_event_expiry: true, points_expiry_days: 365 }] },
);

export function shopJson(shop: ShopRow): Static<typeof Shop> {
  return { ...shop, created_at: isoTime(shop.created_at), updated_at: isoTime(shop.updated_at) };
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
          'Expiry and pending settings apply to points events created afterwards; existing lots keep their expiry. A new vip_tier_window re-tiers every ' +
          'customer in the background. A new timezone moves the days of reports.',
        body: ShopUpdate,
        response: { 200: DataEnvelope(Shop), ...errorResponses('write') },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, async (trx, audit) => {
        const zone = request.body.timezone;
        if (zone !== undefined && !isTimeZone(zone)) {
          throw validationError([
            {
              param: 'timezone',
              code: 'invalid_time_zone',
              message: `timezone must be an IANA time zone name such as Europe/Berlin, got ${JSON.stringify(zone)}`,
            },
          ]);
        }
        const was = await getShop(trx, request.shop.id);
        audit.before = was === undefined ? null : shopJson(was);
        const shop = await updateShop(trx, request.shop.id, request.body, app.clock(), rekeyDays);
        return { status: 200, body: { data: shopJson(shop!) } };
      }),
  );
}
