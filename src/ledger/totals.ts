import { sql } from 'kysely';
import { localDaySql, lockIds, type RowWrite } from '../db/dialect.js';
import type { DB, LedgerFlows, LedgerQuartersTable, LedgerTotalsTable, PointsEventsTable } from '../db/tables.js';

// The ledger's aggregates (docs/reports.md), kept by every writer of points events in the
// transaction that writes them, with the same statement: what each UTC quarter hour and each
// local day of the shop changed, by kind of event, and the shop's totals. A report then reads
// one row per day whatever the number of events.

/** The kinds of ledger flow, each the signed sum of one kind of event as reports show it. */
export const FLOW_KINDS = ['earned', 'redeemed', 'deducted', 'expired', 'reversed', 'clawed_back'] as const;
export type FlowKind = (typeof FLOW_KINDS)[number];

export const FLOW_COLUMNS = [
  ...FLOW_KINDS.map((k) => `points_${k}` as const),
  'points_pending',
  ...FLOW_KINDS.map((k) => `credits_${k}` as const),
] as const satisfies readonly (keyof LedgerFlows)[];

export const QUARTER_MS = 900_000;

/** What an event is for the aggregates. */
export type FlowEvent = Pick<PointsEventsTable, 'source' | 'points_amount' | 'credits_amount' | 'applied_at'> & { order_remote_id?: number | null };

/**
 * The kind of one amount of an event: its source for redemptions, expirations, reversals and
 * refunds' clawbacks (a `refund` linked to its order), else its sign.
 */
export function flowKind(event: FlowEvent, amount: number): FlowKind {
  switch (event.source) {
    case 'reward_redemption':
      return 'redeemed';
    case 'expiration':
      return 'expired';
    case 'reversal':
      return 'reversed';
  }
  if (event.source === 'refund' && event.order_remote_id != null) return 'clawed_back';
  return amount > 0 ? 'earned' : 'deducted';
}

export function noFlows(): LedgerFlows {
  return Object.fromEntries(FLOW_COLUMNS.map((c) => [c, 0])) as unknown as LedgerFlows;
}

/** Adds an amount of a kind to flows: what was earned as is, what was taken off negated. */
function addFlow(flows: LedgerFlows, unit: 'points' | 'credits', kind: FlowKind, amount: number): void {
  flows[`${unit}_${kind}`] += kind === 'earned' ? amount : -amount;
}

/** What a change of pending points adds: `points` (signed) at `at`. */
export interface PendingChange {
  at: number;
  points: number;
}

/** Events (and a change of the pending points) as flows per shop quarter, one row per quarter touched. */
export function quarterFlows(shopId: number, events: readonly FlowEvent[], pending?: PendingChange): LedgerQuartersTable[] {
  const quarters = new Map<number, LedgerQuartersTable>();
  const rowOf = (at: number) => {
    const quarter = Math.floor(at / QUARTER_MS);
    let row = quarters.get(quarter);
    if (row === undefined) quarters.set(quarter, (row = { shop_id: shopId, quarter, ...noFlows() }));
    return row;
  };
  for (const event of events) {
    const points = Number(event.points_amount);
    const credits = Number(event.credits_amount);
    if (points !== 0) addFlow(rowOf(event.applied_at), 'points', flowKind(event, points), points);
    if (credits !== 0) addFlow(rowOf(event.applied_at), 'credits', flowKind(event, credits), credits);
  }
  if (pending !== undefined && pending.points !== 0) rowOf(pending.at).points_pending += pending.points;
  return [...quarters.values()];
}

/** What else the write changes in the shop's totals. */
export interface TotalsChange {
  /** Customers who have points now less those who had before. */
  holders?: number;
  pending?: PendingChange;
}

/**
 * The writes that keep the aggregates for events written with them (and a change of the
 * pending points): given to the same writeRows as the events, they are in the same statement on
 * PostgreSQL. Local days are computed by the statement from the shop's time zone as it is then:
 * a change of time zone takes the shop's lock on event ids (rekeyDays), which every writer of
 * events holds at that point.
 */
export function totalsWrites(trx: DB, shopId: number, events: readonly FlowEvent[], change: TotalsChange = {}): RowWrite[] {
  const rows = quarterFlows(shopId, events, change.pending);
  if (rows.length === 0 && !change.holders) return [];
  const total: LedgerTotalsTable = {
    shop_id: shopId,
    points_outstanding: 0,
    credits_outstanding: 0,
    points_pending: change.pending?.points ?? 0,
    customers_with_points: change.holders ?? 0,
  };
  for (const event of events) {
    total.points_outstanding += Number(event.points_amount);
    total.credits_outstanding += Number(event.credits_amount);
  }
  const add = (columns: readonly string[]) => ({ update: [], add: columns });
  return [
    { insert: 'ledger_quarters', rows, onConflict: { key: ['shop_id', 'quarter'], ...add(FLOW_COLUMNS) } },
    {
      insertSelect: 'ledger_days',
      rowsOf: 'ledger_quarters',
      rows,
      columns: ['shop_id', 'day', ...FLOW_COLUMNS],
      select: (source) => daysSelect(trx, source),
      onConflict: { key: ['shop_id', 'day'], ...add(FLOW_COLUMNS) },
    },
    {
      insert: 'ledger_totals',
      rows: [total],
      onConflict: { key: ['shop_id'], ...add(['points_outstanding', 'credits_outstanding', 'points_pending', 'customers_with_points']) },
    },
  ];
}

/** Quarters (`source`, with shop_id and quarter) summed into the local days of their shop's time zone. */
function daysSelect(trx: DB, source: string, where = 'true'): string {
  const sums = FLOW_COLUMNS.map((c) => `sum(v."${c}")`).join(', ');
  return `select v.shop_id, ${localDaySql(trx, `v.quarter * ${QUARTER_MS}`, 's.timezone')} as day, ${sums}
    from ${source} join shops s on s.id = v.shop_id where ${where} group by v.shop_id, 2`;
}

/**
 * Keys the shop's local days anew from its quarters, after a change of its time zone: as many
 * rows as quarters with flows, whatever the number of events. Holds the shop's lock on event
 * ids to commit, so that no writer keys a day by the zone it replaces.
 */
export async function rekeyDays(trx: DB, shopId: number): Promise<void> {
  await lockIds(trx, shopId, 'points_events');
  await trx.deleteFrom('ledger_days').where('shop_id', '=', shopId).execute();
  const columns = ['shop_id', 'day', ...FLOW_COLUMNS].map((c) => `"${c}"`).join(', ');
  await sql`insert into ledger_days (${sql.raw(columns)}) ${sql.raw(daysSelect(trx, 'ledger_quarters v', `v.shop_id = ${Number(shopId)}`))}`.execute(trx);
}
