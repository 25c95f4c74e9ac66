import { Type } from 'typebox';
import { retierShopLater } from '../../tiers/jobs.js';
import { integer, money, text } from '../fields.js';
import type { Resource } from '../resource.js';
import { INT32_MAX } from './rewards.js';

export const vipTiers: Resource = {
  table: 'vip_tiers',
  path: 'vip_tiers',
  scope: 'vip_tiers',
  singular: 'VIP tier',
  title: 'VipTier',
  tag: 'VIP tiers',
  plural: 'VIP tiers',
  id: 'id',
  write: 'crud',
  // A tier created, changed or deleted re-tiers the shop's customers in the background.
  effects: { written: (trx, w) => retierShopLater(trx, w.shopId), removed: retierShopLater },
  fields: {
    name: text('Name shown to customers, unique in the shop', 'Gold', 255, { required: true, sortable: true, unique: 'exact' }),
    points_threshold: integer(
      "What reaching the tier takes, in the shop's vip_tier_metric over its vip_tier_window: points earned, amount spent (whole units of the " +
        "shop's currency) or orders paid; unique in the shop. threshold is its other name: either may be sent, both are shown",
      1000,
      0,
      INT32_MAX,
      { required: true, sortable: true, unique: 'exact', alias: 'threshold' },
    ),
    earning_multiplier: money(
      "What the order earning rule earns for the tier's members is multiplied by this (rounded down); from the order after the one that reached the tier",
      1.25,
      {
        default: 1,
        minimum: 1,
        maximum: 100,
      },
    ),
  },
  description:
    "A customer's tier is the highest one whose threshold their value in the shop's vip_tier_metric reaches, recomputed with every write that changes it; " +
    'one who drops below keeps the tier for vip_tier_retention_days. ' +
    "Creating, changing or deleting a tier re-tiers the shop's customers in the background: recompute_status says when that is done.",
  computed: {
    schema: {
      recompute_status: Type.Union([Type.Literal('pending'), Type.Literal('done')], {
        description:
          "pending while the shop's customers are being re-tiered after a tier changed; done when every customer holds the tier the current tiers give",
        examples: ['done'],
      }),
    },
    async of(db, shopId, rows) {
      const shop = await db.selectFrom('shops').select('retier_after').where('id', '=', shopId).executeTakeFirst();
      const status = shop?.retier_after === null || shop?.retier_after === undefined ? 'done' : 'pending';
      return rows.map(() => ({ recompute_status: status }));
    },
  },
};
