import { sql } from 'kysely';
import { isoTime } from '../clock.js';
import { periodAt, type CalendarPeriod } from '../core/periods.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB, EarningRulesTable } from '../db/tables.js';

// Ways to earn (docs/earning.md): the enabled custom_action and visit_url rules, and what a
// customer has done of each in its current period. A customer's count by a rule is one row of
// earning_action_counts (migration 025), read by its key: nothing here reads a history.

export interface WayToEarn {
  id: number;
  kind: 'custom_action' | 'visit_url';
  name: string;
  description: string | null;
  url: string | null;
  points: number;
  /** Hundredths of a credit. */
  credits: number;
  limitCount: number;
  limitPeriod: CalendarPeriod;
  /** A shopper may claim it (visit_url rules always may). */
  claimable: boolean;
}

const COLUMNS = ['id', 'kind', 'name', 'description', 'url', 'points_amount', 'credits_amount', 'limit_count', 'limit_period', 'claimable'] as const;

type RuleRow = Pick<EarningRulesTable, (typeof COLUMNS)[number]>;

function wayOf(row: RuleRow): WayToEarn {
  return {
    id: Number(row.id),
    kind: row.kind as WayToEarn['kind'],
    name: row.name!,
    description: row.description,
    url: row.url,
    points: Number(row.points_amount ?? 0),
    credits: Number(row.credits_amount ?? 0),
    limitCount: Number(row.limit_count ?? 1),
    limitPeriod: row.limit_period ?? 'lifetime',
    claimable: row.kind === 'visit_url' || Number(row.claimable) === 1,
  };
}

const byName = prepareQuery<{ shopId: number; name: string }, RuleRow>((db, p) =>
  db.selectFrom('earning_rules').select(COLUMNS).where('shop_id', '=', p.value('shopId')).where('name', '=', p.value('name')).where('enabled', '=', 1),
);

/** The shop's enabled way to earn of this name (there is at most one). */
export async function wayByName(db: DB, shopId: number, name: string): Promise<WayToEarn | undefined> {
  const [row] = await byName(db, { shopId, name });
  return row === undefined || row.name === null ? undefined : wayOf(row);
}

/** The shop's enabled way to earn with this id. */
export async function wayById(db: DB, shopId: number, id: number): Promise<WayToEarn | undefined> {
  const row = await db
    .selectFrom('earning_rules')
    .select(COLUMNS)
    .where('shop_id', '=', shopId)
    .where('id', '=', id)
    .where('enabled', '=', 1)
    .where('name', 'is not', null)
    .executeTakeFirst();
  return row === undefined ? undefined : wayOf(row);
}

/** The shop's enabled ways to earn, in the order they were made. */
export async function waysToEarn(db: DB, shopId: number): Promise<WayToEarn[]> {
  const rows = await db
    .selectFrom('earning_rules')
    .select(COLUMNS)
    .where('shop_id', '=', shopId)
    .where('enabled', '=', 1)
    .where('name', 'is not', null)
    .orderBy('id')
    .execute();
  return rows.map(wayOf);
}

/** A way to earn as the storefront shows it. */
export function wayJson(way: WayToEarn) {
  return {
    id: way.id,
    kind: way.kind,
    name: way.name,
    description: way.description,
    url: way.url,
    points_amount: way.points,
    credits_amount: way.credits / 100,
    limit_count: way.limitCount,
    limit_period: way.limitPeriod,
    claimable: way.claimable,
  };
}

/** The period of a way to earn holding `now`, in the shop's zone. */
export const periodOf = (way: WayToEarn, now: number, timeZone: string) => periodAt(way.limitPeriod, now, timeZone);

/**
 * Counts one more grant of the way for the customer in the period starting at `periodStart`,
 * unless it would pass the limit: false then, and nothing changes. One upsert of the
 * customer's row for the rule, which holds racing requests in line (PostgreSQL: the second
 * waits for the first's row and sees what it wrote; SQLite: writers are serialised).
 */
export async function countGrant(trx: DB, shopId: number, remoteId: number, way: WayToEarn, periodStart: number, now: number): Promise<boolean> {
  const { rows } = await sql<{ times: number }>`insert into earning_action_counts (shop_id, customer_remote_id, rule_id, period_start, times, last_at)
    values (${shopId}, ${remoteId}, ${way.id}, ${periodStart}, 1, ${now})
    on conflict (shop_id, customer_remote_id, rule_id) do update set
      times = case when earning_action_counts.period_start = excluded.period_start then earning_action_counts.times + 1 else 1 end,
      period_start = excluded.period_start, last_at = excluded.last_at
    where earning_action_counts.period_start <> excluded.period_start or earning_action_counts.times < ${way.limitCount}
    returning times`.execute(trx);
  return rows.length > 0;
}

/** What the customer did of each way to earn, by rule id: the period it was last counted in and how often. */
export async function countsOf(db: DB, shopId: number, remoteId: number): Promise<Map<number, { periodStart: number; times: number }>> {
  const rows = await db
    .selectFrom('earning_action_counts')
    .select(['rule_id', 'period_start', 'times'])
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', '=', remoteId)
    .execute();
  return new Map(rows.map((r) => [Number(r.rule_id), { periodStart: Number(r.period_start), times: Number(r.times) }]));
}

/** A way to earn with what the customer has done of it in its current period, and when they may do it again. */
export function wayForCustomer(way: WayToEarn, done: { periodStart: number; times: number } | undefined, now: number, timeZone: string) {
  const period = periodOf(way, now, timeZone);
  const completed = done !== undefined && done.periodStart === period.start ? done.times : 0;
  const available = completed < way.limitCount;
  return {
    ...wayJson(way),
    completed,
    available,
    available_at: available || period.next === null ? null : isoTime(period.next),
  };
}
