import { createHash } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Static } from 'typebox';
import { isoTime } from '../clock.js';
import type { DB } from '../db/tables.js';
import { campaignsAhead } from '../earning/campaigns.js';
import { waysToEarn, wayJson } from '../earning/ways-to-earn.js';
import { DataEnvelope } from '../http/schemas.js';
import { tiersOf } from '../tiers/tiers.js';
import { Programme } from './schemas.js';
import { storefrontErrors, STOREFRONT_TAG } from './scope.js';

// The public programme: what anyone on the storefront may see before signing in, so it is
// cacheable (ETag, a minute's Cache-Control). Campaigns show what a shopper earns by them and
// when (docs/storefront.md), never what the merchant keeps (ids, cancellation, announcements).

const hundredths = (value: number | null) => (value === null ? null : Number(value) / 100);

async function programmeOf(db: DB, shop: { id: number; name: string; currency: string | null }, now: number): Promise<Static<typeof Programme>> {
  const [rules, ways, rewards, tiers, campaigns] = await Promise.all([
    db
      .selectFrom('earning_rules')
      .select(['kind', 'points_per_unit', 'unit_amount', 'min_order_total', 'currency', 'points_amount', 'credits_amount'])
      .where('shop_id', '=', shop.id)
      .where('enabled', '=', 1)
      .where('name', 'is', null)
      .orderBy('kind')
      .execute(),
    waysToEarn(db, shop.id),
    db
      .selectFrom('rewards')
      .select(['id', 'name', 'kind', 'value', 'points_price'])
      .where('shop_id', '=', shop.id)
      .where('enabled', '=', 1)
      .orderBy('points_price')
      .orderBy('id')
      .execute(),
    tiersOf(db, shop.id),
    campaignsAhead(db, shop.id, now),
  ]);
  return {
    shop: { name: shop.name, currency: shop.currency },
    earning_rules: rules.map((r) => ({
      kind: r.kind,
      points_per_unit: r.points_per_unit === null ? null : Number(r.points_per_unit),
      unit_amount: hundredths(r.unit_amount),
      min_order_total: hundredths(r.min_order_total),
      currency: r.currency,
      points_amount: r.points_amount === null ? null : Number(r.points_amount),
      credits_amount: hundredths(r.credits_amount),
    })),
    ways_to_earn: ways.map(wayJson),
    rewards: rewards.map((r) => ({ id: Number(r.id), name: r.name, kind: r.kind, value: Number(r.value) / 100, points_price: Number(r.points_price) })),
    vip_tiers: tiers.map((t) => ({ id: t.id, name: t.name, points_threshold: t.threshold, earning_multiplier: t.multiplier })),
    campaigns: campaigns.map((c) => ({ ...c, starts_at: isoTime(c.starts_at), ends_at: isoTime(c.ends_at) })),
  };
}

export function registerProgrammeRoute(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/programme',
    {
      config: { publishable: true },
      schema: {
        tags: [STOREFRONT_TAG],
        security: [{ publishableKey: [] }],
        summary: "The shop's public programme",
        description:
          'Takes the `X-Publishable-Key` header and no customer: the enabled earning rules, the enabled rewards, the VIP tiers and the campaigns running now or later. ' +
          'Cacheable: `ETag` (answers 304 to a matching `If-None-Match`) and `Cache-Control: public, max-age=60`.',
        response: { 200: DataEnvelope(Programme), ...storefrontErrors('read') },
      },
    },
    async (request, typed) => {
      // The body is serialised here, once, for its ETag.
      const reply = typed as FastifyReply;
      const data = await programmeOf(request.db, request.shop, app.clock());
      const body = JSON.stringify({ data });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      reply.header('etag', etag).header('cache-control', 'public, max-age=60');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send();
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
