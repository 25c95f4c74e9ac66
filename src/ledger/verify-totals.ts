import { sql, type RawBuilder } from 'kysely';
import { localDaySql } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { FLOW_COLUMNS, FLOW_KINDS, QUARTER_MS } from './totals.js';

// `loyalty verify`'s checks of the reports' aggregates (ledger/totals.ts): the quarters against
// the events summed from scratch, the local days against the quarters, the shop's totals against
// its customers, and the identity of the report against the stored balances.

export interface Check {
  name: string;
  /** Rows with shop_id, subject, expected, actual. `shop` filters on a column. */
  query(shop: (column: string) => RawBuilder<unknown>, db: DB): RawBuilder<{ shop_id: number; subject: string; expected: unknown; actual: unknown }>;
}

/** Every event's amounts summed per kind (as flowKind classes them), per shop and quarter. */
function eventQuarters(): RawBuilder<unknown> {
  const special = sql`(source in ('reward_redemption', 'expiration', 'reversal') or (source = 'refund' and order_remote_id is not null))`;
  const sums = (unit: 'points' | 'credits') => {
    const a = sql.ref(`${unit}_amount`);
    const conditions: Record<(typeof FLOW_KINDS)[number], RawBuilder<unknown>> = {
      earned: sql`not ${special} and ${a} > 0`,
      redeemed: sql`source = 'reward_redemption'`,
      deducted: sql`not ${special} and ${a} < 0`,
      expired: sql`source = 'expiration'`,
      reversed: sql`source = 'reversal'`,
      clawed_back: sql`source = 'refund' and order_remote_id is not null`,
    };
    return FLOW_KINDS.map((k) => sql`sum(case when ${conditions[k]} then ${k === 'earned' ? a : sql`-${a}`} else 0 end) as ${sql.ref(`${unit}_${k}`)}`);
  };
  return sql`(select shop_id, applied_at / ${sql.lit(QUARTER_MS)} as quarter, ${sql.join([...sums('points'), ...sums('credits')])}
    from points_events group by shop_id, applied_at / ${sql.lit(QUARTER_MS)})`;
}

/** The flows of a row `r` as one text, to compare and to show. */
const flowsText = (r: string, columns: readonly string[]) => sql.raw(columns.map((c) => `cast(coalesce(${r}."${c}", 0) as text)`).join(` || ' ' || `));

/** The rows of `actual` and `expected` (both keyed by shop_id and `keys`) whose columns differ. */
function sameRows(
  name: string,
  keys: string | readonly string[],
  actual: RawBuilder<unknown>,
  expectedOf: (db: DB) => RawBuilder<unknown>,
  columns: readonly string[],
): Check {
  const all = [keys].flat();
  const subject = sql.raw(all.map((k) => `'${k} ' || cast(coalesce(a."${k}", x."${k}") as text)`).join(` || ', ' || `));
  const match = sql.raw(all.map((k) => `x."${k}" = a."${k}"`).join(' and '));
  return {
    name,
    query: (shop, db) => sql`select coalesce(a.shop_id, x.shop_id) as shop_id, ${subject} as subject,
        ${flowsText('x', columns)} as expected, ${flowsText('a', columns)} as actual
      from ${actual} a full join ${expectedOf(db)} x on x.shop_id = a.shop_id and ${match}
      where ${shop('coalesce(a.shop_id, x.shop_id)')} and ${flowsText('x', columns)} <> ${flowsText('a', columns)}`,
  };
}

const EVENT_COLUMNS = FLOW_COLUMNS.filter((c) => c !== 'points_pending');
const net = (unit: 'points' | 'credits') => sql.raw(`sum(${FLOW_KINDS.map((k) => `${k === 'earned' ? '' : '-'}"${unit}_${k}"`).join(' ')})`);

/** The quarters summed into the local days of their shop's timezone. */
const quarterDays = (db: DB) => sql`(select q.shop_id, ${sql.raw(localDaySql(db, `q.quarter * ${QUARTER_MS}`, 's.timezone'))} as day,
    ${sql.join(FLOW_COLUMNS.map((c) => sql`sum(q.${sql.ref(c)}) as ${sql.ref(c)}`))}
  from ledger_quarters q join shops s on s.id = q.shop_id group by q.shop_id, 2)`;

export const TOTALS_CHECKS: Check[] = [
  sameRows("each quarter's flows = the events applied in it, by kind", 'quarter', sql`ledger_quarters`, eventQuarters, EVENT_COLUMNS),
  sameRows("each local day's flows = its quarters' in the shop's timezone", 'day', sql`ledger_days`, quarterDays, FLOW_COLUMNS),
  sameRows(
    "the shop's totals = its customers' stored balances and pending points",
    'shop_id',
    sql`ledger_totals`,
    () => sql`(select shop_id, sum(points_balance) as points_outstanding, sum(credits_balance) as credits_outstanding, sum(points_pending) as points_pending,
        sum(case when points_balance > 0 then 1 else 0 end) as customers_with_points from customers group by shop_id)`,
    ['points_outstanding', 'credits_outstanding', 'points_pending', 'customers_with_points'],
  ),
  sameRows(
    "the report's days add up to the customers' stored balances (outstanding = earned − redeemed − deducted − expired − reversed − clawed_back)",
    'shop_id',
    sql`(select shop_id, ${net('points')} as points, ${net('credits')} as credits, sum(points_pending) as pending from ledger_days group by shop_id)`,
    () => sql`(select shop_id, sum(points_balance) as points, sum(credits_balance) as credits, sum(points_pending) as pending from customers group by shop_id)`,
    ['points', 'credits', 'pending'],
  ),
  sameRows(
    'tier_members = the customers (not erased) holding each tier',
    'vip_tier_id',
    sql`(select shop_id, vip_tier_id, n from tier_members where n <> 0)`,
    () => sql`(select shop_id, vip_tier_id, count(*) as n from customers where vip_tier_id is not null and remote_id > 0 group by shop_id, vip_tier_id)`,
    ['n'],
  ),
  sameRows(
    'reward_redemption_days = the redemptions of each reward per day',
    ['reward_id', 'day'],
    sql`reward_redemption_days`,
    () =>
      sql`(select shop_id, reward_id, created_at / ${sql.lit(86_400_000)} as day, count(*) as n from redemptions group by shop_id, reward_id, created_at / ${sql.lit(86_400_000)})`,
    ['n'],
  ),
];
