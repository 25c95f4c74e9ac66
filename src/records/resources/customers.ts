import { tierProgress, tiersOf, type Tier } from '../../tiers/tiers.js';
import { metricValue } from '../../tiers/metric.js';
import { getShop, TIER_METRICS, type Shop } from '../../shops/repository.js';
import { findCustomer } from '../../customers/repository.js';
import { SEARCH_WORDS, whereSearched } from '../../customers/search.js';
import { customerBirthdays, customersWritten, drawBulkReferralCodes, firstBirthdays } from '../../earning/customers.js';
import { isoTime } from '../../clock.js';
import { BALANCE_COLUMNS, balancesAt, creditsToNumber, type Balances } from '../../ledger/balances.js';
import { sql, type SelectQueryBuilder } from 'kysely';
import { Type } from 'typebox';
import { text } from '../fields.js';
import type { Resource, Row } from '../resource.js';

export const customers: Resource = {
  table: 'customers',
  path: 'customers',
  scope: 'customers',
  singular: 'customer',
  title: 'Customer',
  tag: 'Customers',
  plural: 'customers',
  id: 'remote_id',
  write: 'upsert',
  updatedAt: 'When a field, a balance or the tier last changed; a write that changes nothing leaves it',
  // A new customer earns the signup rule and gets a referral code; a birthday schedules a grant.
  // A bulk upsert writes a new customer's code and first birthday grant in its insert.
  effects: {
    prior: customerBirthdays,
    created: async (_trx, w, fresh) => ({ referral_code: drawBulkReferralCodes(fresh.length), birthday_next_at: firstBirthdays(fresh, w.now) }),
    async written(trx, w, written, prior) {
      const writes = written.map((r) => ({
        remoteId: r.id,
        created: r.created,
        birthdayBefore: r.created ? undefined : ((prior.get(r.id)?.birthday as string | null | undefined) ?? null),
        birthday: (r.values.birthday as string | null | undefined) ?? null,
        coded: typeof r.values.referral_code === 'string',
        scheduled: r.created && r.values.birthday_next_at !== undefined,
      }));
      await customersWritten(trx, w.shopId, writes, w.now, { earn: w.earn });
    },
  },
  fields: {
    email: text('E-mail address, unique in the shop (case-insensitive)', 'ada@example.com', 254, { format: 'email', nullable: true, unique: 'ci' }),
    first_name: text('First name', 'Ada', 255, { nullable: true }),
    last_name: text('Last name', 'Lovelace', 255, { nullable: true }),
    phone: text('Phone number', '+44 20 7946 0958', 64, { nullable: true }),
    birthday: text('Date of birth; the birthday earning rule grants on it once a calendar year (UTC)', '1815-12-10', 10, { format: 'date', nullable: true }),
    referral_code: text('The code friends are referred with (POST /referrals); set when the customer is created, unique in the shop', 'K7QM2XH4RTCP', 12, {
      nullable: true,
      readOnly: true,
    }),
  },
  // Balances are stored on the customer by the ledger (docs/ledger.md): read with the row, in
  // the same snapshot, and corrected through the lots' index only when something expired since.
  computed: {
    columns: ['remote_id', ...BALANCE_COLUMNS, 'vip_tier_retained_until', 'amount_spent_window', 'orders_count_window'],
    schema: {
      points_balance: Type.Integer({ description: 'Points available now: what unexpired lots hold', examples: [1250] }),
      credits_balance: Type.Number({ description: 'Store credit available now, to the hundredth', examples: [12.5] }),
      points_pending: Type.Integer({ description: 'Points earned but not yet spendable (pending until their release)', examples: [0] }),
      points_earned_lifetime: Type.Integer({
        description: "Points granted over the customer's lifetime, by any source, less what reversals and refund clawbacks took back",
        examples: [5400],
      }),
      points_spent_lifetime: Type.Integer({
        description: "Points taken by deductions and redemptions over the customer's lifetime (not by expiry, clawbacks or reversals)",
        examples: [4150],
      }),
      next_expiry: Type.Union(
        [
          Type.Object(
            {
              points: Type.Integer({ description: 'Points that expire then', examples: [300] }),
              credits: Type.Number({ description: 'Store credit that expires then', examples: [0] }),
              expires_at: Type.String({ format: 'date-time', description: 'When the earliest-expiring unexpired lots expire' }),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ],
        { description: 'What expires next and when; null when nothing the customer holds expires' },
      ),
      vip_tier: Type.Union(
        [Type.Object({ id: Type.Integer({ examples: [3] }), name: Type.String({ examples: ['Gold'] }) }, { additionalProperties: false }), Type.Null()],
        {
          description:
            'The highest VIP tier that vip_tier_progress.value reaches, or the tier kept until vip_tier_retained_until after a drop; null below every tier. ' +
            'Changed by events, orders and as the window moves, never on a read',
        },
      ),
      vip_tier_retained_until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description:
          "The customer dropped below vip_tier and keeps it until then (the shop's vip_tier_retention_days); the re-tiering job moves them at that instant. Null when not retained",
        examples: [null],
      }),
      vip_tier_progress: Type.Object(
        {
          metric: Type.Union([Type.Literal(TIER_METRICS[0]), Type.Literal(TIER_METRICS[1]), Type.Literal(TIER_METRICS[2])], {
            description: "The shop's vip_tier_metric: what value and the thresholds are in",
            examples: ['points_earned'],
          }),
          value: Type.Number({
            description:
              "What the tier is judged by, in the metric over the shop's vip_tier_window: points earned, amount spent (in the shop's currency) or orders",
            examples: [1450],
          }),
          points_earned: Type.Integer({
            description: "Points earned in the shop's vip_tier_window (granted, less reversals and refunds; pending ones once released), whatever the metric",
            examples: [1450],
          }),
          next_tier: Type.Union(
            [
              Type.Object(
                {
                  id: Type.Integer(),
                  name: Type.String(),
                  threshold: Type.Integer({ description: 'In the metric' }),
                  points_threshold: Type.Integer({ description: 'Alias of threshold' }),
                },
                { additionalProperties: false },
              ),
              Type.Null(),
            ],
            {
              description: 'The next tier up; null at the top (or when the shop has no tiers)',
            },
          ),
          needed: Type.Number({ description: 'What is still needed in the metric to reach next_tier; 0 when there is none', examples: [3550] }),
          points_needed: Type.Number({ description: 'Alias of needed (points when the metric is points_earned)', examples: [3550] }),
        },
        { additionalProperties: false, description: 'How far the customer is from the next tier' },
      ),
    },
    async of(db, shopId, rows, now) {
      const balances = await balancesAt(db, shopId, rows as unknown as Parameters<typeof balancesAt>[2], now);
      const tiers = await tiersOf(db, shopId);
      const shop = (await getShop(db, shopId))!;
      return balances.map((b, i) => customerComputed(rows[i]!, b, shop, tiers));
    },
  },
  // The ledger's stored columns (migration 015 indexes them): the balances as the lots hold
  // them, which leaves lots expired since the last sweep in until it runs.
  sorts: { points_balance: 'points_balance', points_earned_lifetime: 'points_earned_lifetime', credits_balance: 'credits_balance' },
  filters: {
    query: {
      schema: Type.String({
        minLength: 1,
        maxLength: 200,
        description: `Only customers every word of which (up to ${SEARCH_WORDS}) starts their first name, last name or e-mail address, or is their remote_id; case-insensitive. "margaret", "Margaret Lov" and "margaret.lovelace@" find Margaret Lovelace`,
        examples: ['Margaret Lovelace'],
      }),
      apply: (query, value) => whereSearched(query, String(value)),
    },
    email: {
      schema: Type.String({
        minLength: 1,
        maxLength: 254,
        description: 'Only the customer with this e-mail address (case-insensitive)',
        examples: ['ada@example.com'],
      }),
      apply: (query, value) => query.where(sql`lower(email)`, '=', String(value).toLowerCase()),
    },
    vip_tier_id: {
      schema: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Only the members of this VIP tier', examples: [3] }),
      apply: (query, value) => query.where('vip_tier_id', '=', Number(value)),
    },
    ...Object.fromEntries(
      (['gt', 'gte', 'lt', 'lte'] as const).map((op) => [
        `updated_at[${op}]`,
        {
          schema: Type.String({
            format: 'date-time',
            description: `Only customers last changed ${{ gt: 'after', gte: 'at or after', lt: 'before', lte: 'at or before' }[op]} this time`,
          }),
          apply: (query: SelectQueryBuilder<any, any, Row>, value: number | string) =>
            query.where('updated_at', { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op] as '>', Number(value)),
        },
      ]),
    ),
  },
  lookup: {
    param: 'customer_identifier',
    description: "The customer's remote_id, or e-mail address (case-insensitive)",
    examples: ['7012345678', 'ada@example.com'],
    find: async (db, shopId, identifier) => findCustomer(db, shopId, identifier) as Promise<Record<string, unknown> | undefined>,
  },
};

/**
 * A customer's computed fields, from its row, its balances at the instant shown, the shop and
 * its tiers: the record's (computed.of, a page at once) and the storefront's /me (one customer,
 * with the shop and tiers its key holds).
 */
export function customerComputed(row: Record<string, unknown>, b: Balances, shop: Shop, tiers: readonly Tier[]) {
  const held = row.vip_tier_id === null || row.vip_tier_id === undefined ? null : Number(row.vip_tier_id);
  const tier = held === null ? undefined : tiers.find((t) => t.id === held);
  return {
    points_balance: b.points,
    credits_balance: creditsToNumber(b.credits),
    points_pending: b.pending,
    points_earned_lifetime: b.earnedLifetime,
    points_spent_lifetime: b.spentLifetime,
    next_expiry:
      b.nextExpiry === null ? null : { points: b.nextExpiry.points, credits: creditsToNumber(b.nextExpiry.credits), expires_at: isoTime(b.nextExpiry.at) },
    vip_tier: tier === undefined ? null : { id: tier.id, name: tier.name },
    vip_tier_retained_until: row.vip_tier_retained_until === null ? null : isoTime(Number(row.vip_tier_retained_until)),
    vip_tier_progress: tierProgress(
      tiers,
      shop.vip_tier_metric,
      // The three sums the metric reads, not a copy of the whole row (a page: 25 copies of 24 columns).
      metricValue(shop, {
        points_earned_window: b.earnedWindow,
        amount_spent_window: row.amount_spent_window,
        orders_count_window: row.orders_count_window,
      } as never).value,
      b.earnedWindow,
      tier?.id ?? null,
    ),
  };
}
