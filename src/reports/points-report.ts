import { sql } from 'kysely';
import { dayDate } from '../core/time-zones.js';
import type { DB, LedgerFlows } from '../db/tables.js';
import { creditsToNumber } from '../ledger/balances.js';
import { FLOW_COLUMNS, FLOW_KINDS, noFlows } from '../ledger/totals.js';

// The points report (docs/reports.md): the ledger's flows per local day, week or month of the
// shop, from the days kept by every writer of the ledger (ledger/totals.ts), each period
// reconciling exactly. It reads one row per day of the range, one sum over the days after it
// (bounded by time, not by events) and the shop's totals.

export type Interval = 'day' | 'week' | 'month';

/** How many periods a report may have, per interval. */
export const MAX_PERIODS: Record<Interval, number> = { day: 366, week: 106, month: 120 };

/** Outstanding (available, stored) points and credits and pending points at an instant. */
interface Standing {
  points: number;
  credits: number;
  pending: number;
}

export interface Period {
  /** First and last local day (days since 1970-01-01), both inclusive. */
  first: number;
  last: number;
  flows: LedgerFlows;
  start: Standing;
  end: Standing;
}

/** What one row of flows changes the outstanding points and credits by. */
function net(flows: LedgerFlows, unit: 'points' | 'credits'): number {
  let out = flows[`${unit}_earned`];
  for (const kind of FLOW_KINDS) if (kind !== 'earned') out -= flows[`${unit}_${kind}`];
  return out;
}

/** The first day of the period of `interval` that holds `day`. */
export function periodStart(day: number, interval: Interval): number {
  if (interval === 'day') return day;
  // Weeks start on Monday (ISO 8601); 1970-01-01 was a Thursday.
  if (interval === 'week') return day - ((((day + 3) % 7) + 7) % 7);
  const date = new Date(day * 86_400_000);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 86_400_000;
}

/** The periods between two local days (inclusive), the first and last cut to them. */
export function periodsOf(from: number, to: number, interval: Interval): { first: number; last: number }[] {
  const out: { first: number; last: number }[] = [];
  for (let day = from; day <= to; day++) {
    const last = out.at(-1);
    if (last !== undefined && periodStart(last.first, interval) === periodStart(day, interval)) last.last = day;
    else out.push({ first: day, last: day });
  }
  return out;
}

const sumsOf = (columns: readonly string[]) => sql.join(columns.map((c) => sql`coalesce(sum(${sql.ref(c)}), 0) as ${sql.ref(c)}`));

/** The shop's ledger per period between two local days of its time zone. */
export async function pointsReport(db: DB, shopId: number, from: number, to: number, interval: Interval): Promise<Period[]> {
  const rows = await db
    .selectFrom('ledger_days')
    .select(['day', ...FLOW_COLUMNS])
    .where('shop_id', '=', shopId)
    .where('day', '>=', from)
    .where('day', '<=', to)
    .orderBy('day')
    .execute();
  // Where the range ends: the shop's totals less what the days after it changed.
  const {
    rows: [after],
  } = await sql<Record<string, number>>`select t.points, t.credits, t.pending, a.* from
      (select coalesce(sum(points_outstanding), 0) as points, coalesce(sum(credits_outstanding), 0) as credits, coalesce(sum(points_pending), 0) as pending
        from ledger_totals where shop_id = ${shopId}) t,
      (select ${sumsOf(FLOW_COLUMNS)} from ledger_days where shop_id = ${shopId} and day > ${to}) a`.execute(db);
  const later = toFlows(after!);
  const standing: Standing = {
    points: Number(after!.points) - net(later, 'points'),
    credits: Number(after!.credits) - net(later, 'credits'),
    pending: Number(after!.pending) - later.points_pending,
  };
  // Back to where the range starts, then forward period by period.
  const days = rows.map((row) => ({ day: Number(row.day), flows: toFlows(row) }));
  for (const { flows } of days) {
    standing.points -= net(flows, 'points');
    standing.credits -= net(flows, 'credits');
    standing.pending -= flows.points_pending;
  }
  const out: Period[] = [];
  let next = 0;
  for (const { first, last } of periodsOf(from, to, interval)) {
    const flows = noFlows();
    for (; next < days.length && days[next]!.day <= last; next++) for (const c of FLOW_COLUMNS) flows[c] += days[next]!.flows[c];
    const start = { ...standing };
    standing.points += net(flows, 'points');
    standing.credits += net(flows, 'credits');
    standing.pending += flows.points_pending;
    out.push({ first, last, flows, start, end: { ...standing } });
  }
  return out;
}

function toFlows(row: Record<string, unknown>): LedgerFlows {
  const out = noFlows();
  for (const c of FLOW_COLUMNS) out[c] = Number(row[c] ?? 0);
  return out;
}

/** A period as the API shows it. */
export function periodJson(period: Period): Record<string, string | number> {
  const out: Record<string, string | number> = { period_start: dayDate(period.first), period_end: dayDate(period.last) };
  for (const kind of FLOW_KINDS) out[`points_${kind}`] = period.flows[`points_${kind}`];
  out.points_outstanding_start = period.start.points;
  out.points_outstanding_end = period.end.points;
  out.points_pending_end = period.end.pending;
  for (const kind of FLOW_KINDS) out[`credits_${kind}`] = creditsToNumber(period.flows[`credits_${kind}`]);
  out.credits_outstanding_start = creditsToNumber(period.start.credits);
  out.credits_outstanding_end = creditsToNumber(period.end.credits);
  return out;
}
