import { Type, type Static } from 'typebox';
import { DAY_MS } from '../clock.js';
import { shopRowCount } from '../db/counts.js';
import type { DB } from '../db/tables.js';
import { creditsToNumber } from '../ledger/balances.js';

// The programme report (docs/reports.md): figures read from counters kept where they change
// (shop_counts, the ledger's totals, tier members and redemptions per reward and day, the last
// two by triggers of migration 015), so it costs the same whatever the shop's size: at most one
// row per tier, and one per reward and day of the last 30.

const TOP_REWARDS = 5;
const WINDOW_DAYS = 30;

const Ref = Type.Object({ id: Type.Integer(), name: Type.String() }, { additionalProperties: false });

export const ProgrammeReport = Type.Object(
  {
    customers: Type.Integer(),
    customers_with_points: Type.Integer(),
    members_by_tier: Type.Array(Type.Object({ vip_tier: Type.Union([Ref, Type.Null()]), customers: Type.Integer() })),
    points_outstanding: Type.Integer(),
    points_pending: Type.Integer(),
    credits_outstanding: Type.Number(),
    redemptions_last_30_days: Type.Integer(),
    top_rewards: Type.Array(Type.Object({ reward: Ref, redemptions: Type.Integer() }), { maxItems: TOP_REWARDS }),
  },
  {
    $id: 'ProgrammeReport',
    title: 'Programme report',
    // Described once, briefly (the document has a size budget); docs/reports.md says more.
    description: 'Balances as stored; tiers lowest first, null (no tier) first of all; top_rewards: most redeemed in the last 30 days.',
  },
);

export async function programmeReport(db: DB, shopId: number, now: number): Promise<Static<typeof ProgrammeReport>> {
  const customers = await shopRowCount(db, shopId, 'customers');
  const totals = await db.selectFrom('ledger_totals').selectAll().where('shop_id', '=', shopId).executeTakeFirst();
  const tiers = await db
    .selectFrom('vip_tiers')
    .leftJoin('tier_members', (j) => j.onRef('tier_members.shop_id', '=', 'vip_tiers.shop_id').onRef('tier_members.vip_tier_id', '=', 'vip_tiers.id'))
    .select(['vip_tiers.id', 'vip_tiers.name', 'tier_members.n'])
    .where('vip_tiers.shop_id', '=', shopId)
    .orderBy('vip_tiers.points_threshold')
    .orderBy('vip_tiers.id')
    .execute();
  const members = tiers.map((t) => ({ vip_tier: { id: Number(t.id), name: t.name }, customers: Number(t.n ?? 0) }));
  const inTiers = members.reduce((sum, m) => sum + m.customers, 0);
  const since = Math.floor(now / DAY_MS) - (WINDOW_DAYS - 1);
  const redeemed = await db
    .selectFrom('reward_redemption_days as d')
    .innerJoin('rewards as r', (j) => j.onRef('r.shop_id', '=', 'd.shop_id').onRef('r.id', '=', 'd.reward_id'))
    .select(['r.id', 'r.name', (eb) => eb.fn.sum<number>('d.n').as('n')])
    .where('d.shop_id', '=', shopId)
    .where('d.day', '>=', since)
    .groupBy(['r.id', 'r.name'])
    .execute();
  const ranked = redeemed
    .map((r) => ({ reward: { id: Number(r.id), name: r.name }, redemptions: Number(r.n) }))
    .sort((a, b) => b.redemptions - a.redemptions || a.reward.id - b.reward.id);
  // Deleted rewards' redemptions still count in the total.
  const { n: total } = (await db
    .selectFrom('reward_redemption_days')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('n'), eb.lit(0)).as('n'))
    .where('shop_id', '=', shopId)
    .where('day', '>=', since)
    .executeTakeFirst())!;
  return {
    customers,
    customers_with_points: Number(totals?.customers_with_points ?? 0),
    members_by_tier: [{ vip_tier: null, customers: Math.max(0, customers - inTiers) }, ...members],
    points_outstanding: Number(totals?.points_outstanding ?? 0),
    points_pending: Number(totals?.points_pending ?? 0),
    credits_outstanding: creditsToNumber(Number(totals?.credits_outstanding ?? 0)),
    redemptions_last_30_days: Number(total),
    top_rewards: ranked.slice(0, TOP_REWARDS),
  };
}
