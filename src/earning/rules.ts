import { DAY_MS } from '../clock.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB, EarningRuleKind, EarningRulesTable } from '../db/tables.js';
import { posting, type Posting } from '../ledger/posting.js';
import type { Campaign } from './campaigns.js';

// What the shop's earning rules grant (docs/earning.md). The arithmetic is pure; the one
// query finds the enabled rule of a kind.

export type EarningRule = Pick<
  EarningRulesTable,
  'id' | 'kind' | 'points_per_unit' | 'unit_amount' | 'min_order_total' | 'currency' | 'points_amount' | 'credits_amount'
>;

const enabledRules = prepareQuery<{ shopId: number; kind: string }, EarningRule>((db, p) =>
  db
    .selectFrom('earning_rules')
    .select(['id', 'kind', 'points_per_unit', 'unit_amount', 'min_order_total', 'currency', 'points_amount', 'credits_amount'])
    .where('shop_id', '=', p.value('shopId'))
    .where('kind', '=', p.value('kind'))
    .where('enabled', '=', 1),
);

/** The shop's enabled rule of this kind (there is at most one), numbers as numbers. */
export async function enabledRule(db: DB, shopId: number, kind: EarningRuleKind): Promise<EarningRule | undefined> {
  const [row] = await enabledRules(db, { shopId, kind });
  if (row === undefined) return undefined;
  const n = (v: number | null) => (v === null ? null : Number(v));
  return {
    id: Number(row.id),
    kind: row.kind,
    points_per_unit: n(row.points_per_unit),
    unit_amount: n(row.unit_amount),
    min_order_total: n(row.min_order_total),
    currency: row.currency,
    points_amount: n(row.points_amount),
    credits_amount: n(row.credits_amount),
  };
}

/** What an order earns: points (times the VIP multiplier, rounded down) and hundredths of credit. */
export interface Earning {
  points: number;
  credits: number;
  /** The campaign the points were earned under, when one gave more (orderEarning). */
  campaignId?: number | null;
}

export const NOTHING: Earning = Object.freeze({ points: 0, credits: 0 });

/**
 * What an order of `total` hundredths in `currency` earns by the order rule: points_per_unit
 * for each whole unit_amount, times `multiplier` (rounded down); nothing in another currency or
 * below the minimum. Exact for any total below 2^53 hundredths.
 *
 * `campaigns` are those running for the order (campaigns.ts, campaignsFor): the one that gives
 * the most applies, floor(base × multiplier × its multiplier) + its bonus_points, rounded once;
 * none stacks, a tie goes to the lowest id, and one that gives nothing more is not applied.
 */
export function orderEarning(rule: EarningRule | undefined, total: number, currency: string, multiplier = 1, campaigns: readonly Campaign[] = []): Earning {
  if (rule === undefined || rule.kind !== 'order' || rule.points_per_unit === null || rule.unit_amount === null || rule.unit_amount <= 0) return NOTHING;
  if (rule.currency !== null && rule.currency !== currency) return NOTHING;
  if (rule.min_order_total !== null && total < rule.min_order_total) return NOTHING;
  const units = BigInt(Math.max(0, total)) / BigInt(rule.unit_amount);
  const base = units * BigInt(rule.points_per_unit);
  // The multipliers have two decimals: 1.25 → 125 / 100.
  const tier = BigInt(Math.round(multiplier * 100));
  let points = (base * tier) / 100n;
  let campaignId: number | null = null;
  for (const c of [...campaigns].sort((a, b) => a.id - b.id)) {
    const withIt = (base * tier * BigInt(c.multiplier)) / 10_000n + BigInt(c.bonusPoints);
    if (withIt > points) {
      points = withIt;
      campaignId = c.id;
    }
  }
  return { points: Number(points), credits: rule.credits_amount ?? 0, campaignId };
}

/** What a rule of another kind grants each time. */
export function flatEarning(rule: EarningRule | undefined): Earning {
  if (rule === undefined) return NOTHING;
  return { points: rule.points_amount ?? 0, credits: rule.credits_amount ?? 0 };
}

/**
 * How much of `earned` a refund takes back in all, cumulatively: in proportion to the amount
 * refunded (all of it once the order is refunded), rounded down so that a partial refund never
 * takes more than its share. Exact for any amounts below 2^53.
 */
export function refundShare(earned: number, total: number, refunded: number, fullyRefunded: boolean): number {
  if (earned <= 0) return 0;
  if (fullyRefunded || (total > 0 && refunded >= total)) return earned;
  if (total <= 0 || refunded <= 0) return 0;
  return Number((BigInt(earned) * BigInt(refunded)) / BigInt(total));
}

/** When what a grant at `appliedAt` gives expires under the shop's settings; null for never. */
export function defaultExpiry(shop: { points_expiry_days: number | null }, appliedAt: number): number | null {
  return shop.points_expiry_days === null ? null : appliedAt + shop.points_expiry_days * DAY_MS;
}

/** A grant of a flat rule (signup, birthday, subscription billing, referral) to one customer. */
export function ruleGrant(
  rule: EarningRule,
  customer: { remoteId: number; email: string | null },
  now: number,
  expiresAt: number | null,
  note: string,
): Posting | null {
  const { points, credits } = flatEarning(rule);
  if (points === 0 && credits === 0) return null;
  const source = rule.kind === 'referral_referrer' || rule.kind === 'referral_friend' ? 'referral_complete' : rule.kind;
  return posting(customer, { source, points, credits, internalNote: note, appliedAt: now, expiresAt, earningRuleId: rule.id });
}
