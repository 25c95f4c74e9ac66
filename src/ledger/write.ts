import { allocateIdsOf, lockIds, writeRows, type RowWrite } from '../db/dialect.js';
import type { CustomerEarnedDaysTable, DB, LotConsumptionsTable, PointsEventsTable, PointsLotsTable } from '../db/tables.js';
import { enqueueEvents } from '../events/outbox.js';
import { getShop } from '../shops/repository.js';
import type { Balances } from './balances.js';
import { addEarnedDays } from './earned-days-repository.js';
import { eventJson } from './event-json.js';
import { NEVER } from './lot-queue.js';
import { nextExpiries, setLotsRemaining, type NextExpiry } from './lots-repository.js';
import { newLotsVersion } from './lots-version.js';
import { balancesAfter, nextExpiryWith, type CustomerPlan, type LedgerPlan } from './plan.js';
import type { Alongside } from './posting.js';
import type { PointsEvent } from './schemas.js';
import { totalsWrites, type TotalsChange } from './totals.js';

// Writes a covered plan (plan.ts) in the caller's transaction, with a constant number of
// statements however many postings it holds. The customers are locked already (read.ts);
// what needs no new ids is written first, because allocateIdsOf takes the shop's locks on the
// tables' ids, held to commit, and the shop's other writers queue for them: they cover the
// fewest round trips (the ids, one insert, the webhooks' deliveries).

export interface WriteOptions {
  /** The shop has a webhook for points_event.created. */
  announced: boolean;
  alongside?: Alongside | undefined;
  /** The caller's rows, written with the balances (PostOptions.writes). */
  writes?: readonly RowWrite[] | undefined;
  /** Other columns of the customers, set with their balances (PostOptions.columns). */
  columns?: ReadonlyMap<number, Record<string, unknown>> | undefined;
}

export interface Written {
  /** The events as the API shows them, built when first asked for. */
  events: () => PointsEvent[];
  balances: Map<number, Balances>;
}

export async function writePlan(trx: DB, shopId: number, plan: LedgerPlan, now: number, options: WriteOptions): Promise<Written> {
  await setLotsRemaining(
    trx,
    shopId,
    plan.storedLots.map((l) => ({ id: l.id, remaining: l.remaining })),
  );
  const balances = await settleBalances(trx, shopId, plan, now);
  await writeRows(trx, [
    addEarnedDays(earnedDayRows(shopId, plan)),
    ...(options.writes ?? []),
    { update: 'customers', key: ['shop_id', 'remote_id'], rows: customerRows(shopId, plan, balances, now, options.columns) },
  ]);

  const totals = totalsChange(plan, now);
  // A change of pending points alone takes the lock on event ids that a change of time zone
  // waits for (totals.ts), as posting events does.
  if (plan.events.length === 0 && totals.pending !== undefined) await lockIds(trx, shopId, 'points_events');
  const { alongside } = options;
  const [eventIds, lotIds, alongsideIds] = (await allocateIdsOf(trx, shopId, [
    ['points_events', plan.events.length],
    ['points_lots', plan.lots.length],
    ...(alongside?.table === undefined ? [] : [[alongside.table, 1] as const]),
  ])) as [number[], number[], number[] | undefined];
  plan.lots.forEach(({ lot }, k) => (lot.id = lotIds[k]!));
  const besides =
    alongside === undefined ? [] : alongside.table === undefined ? alongside.rows(undefined, eventIds) : alongside.rows(alongsideIds![0]!, eventIds);
  const rows = planRows(shopId, plan, eventIds, now);
  await writeRows(trx, [
    { insert: 'points_events', rows: rows.events },
    { insert: 'points_lots', rows: rows.lots },
    { insert: 'lot_consumptions', rows: rows.consumptions },
    ...besides,
    // The reports' aggregates, in the same statement (totals.ts).
    ...totalsWrites(trx, shopId, rows.events, totals),
  ]);

  // The events as the API shows them are built when asked for: an answer or a webhook needs
  // them, an order's or a job's postings do not.
  let shown: PointsEvent[] | undefined;
  const events = () => (shown ??= rows.events.map((row, i) => eventJson(row, plan.events[i]!.posting.customer.email)));
  if (options.announced) await enqueueEvents(trx, shopId, 'points_event.created', events(), now);
  return { events, balances };
}

/** What the plan changes of the shop's totals beside its events: holders of points, pending points. */
function totalsChange(plan: LedgerPlan, now: number): TotalsChange {
  let holders = 0;
  let pending = 0;
  for (const c of plan.customers) {
    holders += Number(c.storedPoints > 0) - Number(c.before.stored.points > 0);
    pending += c.pending - c.before.pending;
  }
  return { holders, ...(pending === 0 ? {} : { pending: { at: now, points: pending } }) };
}

/**
 * Each customer's balances after the plan, with their next expiry: what the plan knows, or
 * read off the lots' index (their remainders written) where it emptied or refilled the
 * earliest lots; either way merged with the lots the plan grants (not written yet).
 */
async function settleBalances(trx: DB, shopId: number, plan: LedgerPlan, now: number): Promise<Map<number, Balances>> {
  const activeAt = activity(plan, (await getShop(trx, shopId))?.points_expiry_mode === 'inactivity', now);
  const unknown = plan.customers.filter((c) => c.storedNext === undefined).map((c) => c.remoteId);
  const read = await nextExpiries(trx, shopId, unknown, Number.MIN_SAFE_INTEGER);
  const out = new Map<number, Balances>();
  for (const c of plan.customers) {
    const stored = nextExpiryWith(c.storedNext === undefined ? (read.get(c.remoteId) ?? null) : c.storedNext, c.fresh, Number.MIN_SAFE_INTEGER);
    // The next expiry as shown (after now): the stored one, unless it has passed already.
    const shown = stored === null || stored.at > now ? stored : await shownNext(trx, shopId, c, now);
    out.set(c.remoteId, balancesAfter(c, stored, shown, activeAt(c)));
  }
  return out;
}

/**
 * Each customer's last activity after the plan. A posting is activity: in inactivity mode it
 * restarts the customer's clock (expiry.ts); a change of pending points alone is not. In
 * per_lot mode no activity before a switch to inactivity counts (the switch starts a full
 * period: due = max(activity, points_inactivity_since) + days), so a posting only marks a
 * customer without one as active: their stored time is kept, and points_active_at (indexed)
 * is left out of the customers' update, whose index entries SQLite rewrites for every row it
 * sets (customerRows). A posting that read the mode as per_lot while a switch committed on
 * PostgreSQL falls due at most that switch's own transaction earlier than its instant.
 */
function activity(plan: LedgerPlan, inactivityMode: boolean, now: number): (c: CustomerPlan) => number | null {
  const posted = new Set(plan.events.map((e) => e.posting.customer.remoteId));
  return (c) => (!posted.has(c.remoteId) ? c.before.activeAt : inactivityMode || c.before.activeAt === null ? now : c.before.activeAt);
}

async function shownNext(trx: DB, shopId: number, c: CustomerPlan, now: number): Promise<NextExpiry | null> {
  return nextExpiryWith((await nextExpiries(trx, shopId, [c.remoteId], now)).get(c.remoteId) ?? null, c.fresh, now);
}

/**
 * The points earned by customer and day the plan adds. Another aggregate per day of what a
 * plan posts is made the same way, from plan.events (each with its source, applied_at and
 * amounts) and plan.customers (pending points), and written with the same statement.
 */
function earnedDayRows(shopId: number, plan: LedgerPlan): CustomerEarnedDaysTable[] {
  const rows: CustomerEarnedDaysTable[] = [];
  for (const c of plan.customers) for (const [day, points] of c.earnedDays) rows.push({ shop_id: shopId, customer_remote_id: c.remoteId, day, points });
  return rows;
}

function customerRows(
  shopId: number,
  plan: LedgerPlan,
  balances: ReadonlyMap<number, Balances>,
  now: number,
  columns?: ReadonlyMap<number, Record<string, unknown>>,
): Record<string, unknown>[] {
  const rows = plan.customers.map((c) => {
    const next = balances.get(c.remoteId)!.stored.nextExpiry;
    const row: Record<string, unknown> = {
      shop_id: shopId,
      remote_id: c.remoteId,
      points_balance: c.storedPoints,
      credits_balance: c.storedCredits,
      points_pending: c.pending,
      points_earned_lifetime: c.earned,
      points_spent_lifetime: c.spent,
      points_earned_window: c.window,
      tier_window_from: c.windowFrom,
      next_expiry_at: next?.at ?? null,
      next_expiry_points: next?.points ?? 0,
      next_expiry_credits: next?.credits ?? 0,
      points_active_at: balances.get(c.remoteId)!.activeAt,
      // What was read off the customer's lots is read again (migration 023).
      lots_version: newLotsVersion(),
      // Every event, and every change of pending points, changes a balance the customer shows
      // (docs/pagination.md, "updated_at").
      updated_at: now,
    };
    if (columns !== undefined) Object.assign(row, columns.get(c.remoteId));
    return row;
  });
  // A column no customer of the plan changes is left out of the statement: SQLite rewrites the
  // entries of every index on a column it sets, even to the same value (the balance sorts'
  // indexes: a grant of points leaves credits_balance's alone; the last activity's, outside
  // inactivity mode, once every customer of the plan has one).
  const unchanged = new Set(UNCHANGED_WHEN.filter(([, same]) => plan.customers.every((c, i) => same(c.before, rows[i]!))).map(([column]) => column));
  if (unchanged.size === 0 || rows.length === 0) return rows;
  // The rows are made anew with the columns kept, not `delete`d from: an object that loses a
  // property leaves V8's fast properties, and writeRows reads every value of every row (a
  // 1000-grant batch's rows cost 8.7 ms of CPU that way, against well under one).
  const written = Object.keys(rows[0]!).filter((column) => !unchanged.has(column));
  return rows.map((row) => {
    const kept: Record<string, unknown> = {};
    for (const column of written) kept[column] = row[column];
    return kept;
  });
}

/** Columns that may be left out of the customers' update, and when a row leaves its column as stored. */
const UNCHANGED_WHEN: readonly (readonly [string, (before: Balances, row: Record<string, unknown>) => boolean])[] = [
  ['credits_balance', (b, row) => row.credits_balance === b.stored.credits],
  ['points_pending', (b, row) => row.points_pending === b.pending],
  ['tier_window_from', (b, row) => row.tier_window_from === b.windowFrom],
  ['next_expiry_at', (b, row) => row.next_expiry_at === (b.stored.nextExpiry?.at ?? null)],
  ['next_expiry_points', (b, row) => row.next_expiry_points === (b.stored.nextExpiry?.points ?? 0)],
  ['next_expiry_credits', (b, row) => row.next_expiry_credits === (b.stored.nextExpiry?.credits ?? 0)],
  ['points_earned_lifetime', (b, row) => row.points_earned_lifetime === b.earnedLifetime],
  ['points_spent_lifetime', (b, row) => row.points_spent_lifetime === b.spentLifetime],
  ['points_active_at', (b, row) => row.points_active_at === b.activeAt],
];

/** The plan's events, lots and consumptions as rows, given the events' ids (the lots have theirs). */
function planRows(shopId: number, plan: LedgerPlan, eventIds: readonly number[], now: number) {
  const events: PointsEventsTable[] = plan.events.map(({ posting: { customer, entry }, pointsBalance, creditsBalance }, i) => ({
    shop_id: shopId,
    id: eventIds[i]!,
    customer_remote_id: customer.remoteId,
    source: entry.source,
    points_amount: entry.points,
    credits_amount: entry.credits,
    internal_note: entry.internalNote,
    external_note: entry.externalNote,
    custom_action_name: entry.customActionName,
    applied_at: entry.appliedAt,
    expires_at: entry.expiresAt,
    created_at: now,
    points_balance: pointsBalance,
    credits_balance: creditsBalance,
    reverses_event_id: entry.reversesEventId ?? null,
    redemption_id: entry.redemptionId ?? null,
    earning_rule_id: entry.earningRuleId ?? null,
    order_remote_id: entry.orderRemoteId ?? null,
    campaign_id: entry.campaignId ?? null,
  }));
  const lots: PointsLotsTable[] = plan.lots.map(({ lot, kind, remoteId }) => ({
    shop_id: shopId,
    id: lot.id,
    customer_remote_id: remoteId,
    kind,
    event_id: eventIds[lot.eventIndex]!,
    amount: lot.amount,
    remaining: lot.remaining,
    expires_at: lot.key === NEVER ? null : lot.key,
    created_at: now,
  }));
  const consumptions: LotConsumptionsTable[] = plan.consumptions.map((c) => ({
    shop_id: shopId,
    event_id: eventIds[c.eventIndex]!,
    lot_id: c.lot.id,
    amount: c.amount,
  }));
  return { events, lots, consumptions };
}
