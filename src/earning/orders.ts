import type { Selectable } from 'kysely';
import { DAY_MS } from '../clock.js';
import { lockedRows, updateRows, writeRows } from '../db/dialect.js';
import type { DB, OrdersTable } from '../db/tables.js';
import { lockBalances, type Balances } from '../ledger/balances.js';
import { orderGrantTimes } from '../ledger/events-repository.js';
import { posting, type Posting } from '../ledger/posting.js';
import { getShop, type Shop } from '../shops/repository.js';
import { countedOf, OrderDays, orderSumsBefore, tierSubjects, writeOrderSums, type Counted, type SubjectRow } from '../tiers/metric.js';
import { tiersOf, type TierSubject } from '../tiers/tiers.js';
import { campaignsDuring, campaignsFor, type Campaign } from './campaigns.js';
import { postWithEffects } from './effects.js';
import { followSettlement } from './settlement-effects.js';
import { defaultExpiry, enabledRule, orderEarning, refundShare, type EarningRule } from './rules.js';

// Orders drive the ledger (docs/earning.md, "Orders"). After an order is written, its ledger
// state is brought to what its financial_status asks, under the order's row lock: it earns
// once, when first paid (pending until the shop's points_pending_days after placed_at, when
// the shop has them), and refunds take back a share of what it earned, cumulatively, pending
// points first, never below zero. Re-sending an order in any order of arrival changes
// nothing twice: every step compares the order's target with what its ledger state records.
// What the order counts for the order metrics of VIP tiers (amount spent, orders paid) follows
// the same way: the order records what it counted, and the customer's order days move by the
// difference (tiers/metric.ts).

/** Statuses in which the order was paid: it earns, and refunds take back. */
const PAID = new Set(['paid', 'partially_refunded', 'refunded']);

/** An order as settle reads it: every number a number (PostgreSQL's bigint comes as text). */
type OrderState = Omit<Selectable<OrdersTable>, 'shop_id' | 'created_at' | 'updated_at'>;

/** The ledger columns of an order, as settle writes them back. */
const LEDGER_COLUMNS = [
  'points_customer_remote_id',
  'earned_at',
  'earning_rule_id',
  'points_earned',
  'credits_earned',
  'points_reversed',
  'credits_reversed',
  'points_unrecovered',
  'credits_unrecovered',
  'points_pending',
  'pending_release_at',
  'counted_customer_remote_id',
  'counted_day',
  'counted_currency',
  'counted_amount',
  'campaign_id',
] as const;

const NUMERIC = ['remote_id', 'customer_remote_id', 'total', 'placed_at', 'total_refunded', ...LEDGER_COLUMNS.filter((c) => c !== 'counted_currency')] as const;

function toState(row: Record<string, unknown>): OrderState {
  const out = { ...row } as Record<string, unknown>;
  for (const column of NUMERIC) out[column] = row[column] === null ? null : Number(row[column]);
  return out as unknown as OrderState;
}

export interface SettleOptions {
  /** False: orders are stored as they are, and earn nothing (loyalty import --no-earn). */
  earn?: boolean;
  /** The VIP multiplier of each customer; by default that of the tier they hold. */
  multiplier?: (customerRemoteId: number) => number;
}

/**
 * Brings the ledger of these orders of the shop to what their status asks, in the caller's
 * transaction, after they were written. Returns the points events written.
 */
export async function settleOrders(trx: DB, shopId: number, remoteIds: readonly number[], now: number, options: SettleOptions = {}): Promise<number> {
  if (remoteIds.length === 0) return 0;
  const shop = (await getShop(trx, shopId))!;
  const rows = await lockOrders(trx, shopId, remoteIds);
  const before = new Map(rows.map((o) => [o.remote_id, LEDGER_COLUMNS.map((c) => o[c])]));
  const rule = await enabledRule(trx, shopId, 'order');
  const buyers = await lockBuyers(trx, shop, rows, now);
  const multiplier = options.multiplier ?? ((customer: number) => buyers.multipliers.get(customer) ?? 1);
  const available = new Map<number, { points: number; credits: number }>();
  for (const [id, b] of buyers.balances) available.set(id, { points: b.points, credits: b.credits });

  const postings: Posting[] = [];
  const changed: OrderState[] = [];
  // Customers whose order just earned: a first paid order completes their pending referral.
  const paidBy = new Map<number, { remoteId: number; email: string | null }>();
  const pending = new Map<number, number>();
  const addPending = (customer: number, delta: number) => pending.set(customer, (pending.get(customer) ?? 0) + delta);
  const campaigns = options.earn === false || rule === undefined ? [] : await runningCampaigns(trx, shopId, rows);
  const { known, tierIds } = buyers;
  const settlement: Settlement = { shop, now, known, available, postings, addPending, campaigns, tierOf: (customer) => tierIds.get(customer) ?? null };
  const days = new OrderDays(shopId);
  for (const order of rows) {
    // Settling changes the ledger columns only, and only where earn or clawBack says so.
    let settled = false;
    if (order.earned_at === null && options.earn !== false) {
      earn(settlement, rule, order, multiplier);
      settled = order.earned_at !== null;
      const buyer = order.points_customer_remote_id;
      if (settled && buyer !== null && order.financial_status !== 'refunded' && !paidBy.has(buyer))
        paidBy.set(buyer, { remoteId: buyer, email: known.get(buyer) ?? null });
    }
    if (order.earned_at !== null && order.points_customer_remote_id !== null && clawBack(settlement, order)) settled = true;
    if (recount(days, order)) settled = true;
    if (settled) changed.push(order);
  }
  // The ledger writes the pending points with the balances.
  for (const [customer, delta] of pending) if (delta === 0) pending.delete(customer);
  const subjects = await writeSettlement(trx, shop, { postings, pending, days, buyers }, now);
  await updateChanged(trx, shopId, changed, before);
  await followSettlement(trx, shop, { subjects, firstPaid: [...paidBy.values()] }, now);
  return postings.length;
}

/** The orders, locked, as settle reads them. */
async function lockOrders(trx: DB, shopId: number, remoteIds: readonly number[]): Promise<OrderState[]> {
  const rows: OrderState[] = [];
  for (let i = 0; i < remoteIds.length; i += 500) {
    const chunk = remoteIds.slice(i, i + 500);
    const found = await lockedRows(
      trx,
      trx
        .selectFrom('orders')
        .select([...NUMERIC, 'currency', 'financial_status', 'counted_currency'])
        .where('shop_id', '=', shopId)
        .where('remote_id', 'in', chunk)
        .orderBy('remote_id'),
    ).execute();
    rows.push(...found.map((row) => toState(row as unknown as Record<string, unknown>)));
  }
  return rows;
}

/** The buyers of a settlement as one read finds them: balances (locked), e-mails, tiers and, with an order metric, their order sums. */
interface Buyers {
  /** Every buyer of the orders, whether a customer or not (yet). */
  ids: number[];
  balances: Map<number, Balances>;
  /** The buyers that are customers, with their e-mails. */
  known: Map<number, string | null>;
  /** Each buyer's VIP multiplier: that of the tier they hold before this write's events. */
  multipliers: Map<number, number>;
  /** And the tier itself, for the campaigns limited to tiers. */
  tierIds: Map<number, number>;
  /** Each buyer's row for the order sums and tiers (SUBJECT_COLUMNS), when the shop's metric is an order metric. */
  rows: Map<number, SubjectRow>;
}

/** One read of the buyers: their balances, locked, with their e-mails, tiers and order sums. */
async function lockBuyers(trx: DB, shop: Shop, rows: readonly OrderState[], now: number): Promise<Buyers> {
  const ids = [...new Set(rows.map((r) => r.points_customer_remote_id ?? r.customer_remote_id).filter((id): id is number => id !== null))];
  const byOrders = shop.vip_tier_metric !== 'points_earned';
  const tiers = new Map((await tiersOf(trx, shop.id)).map((t) => [t.id, t.multiplier]));
  const buyers: Omit<Buyers, 'balances'> = { ids, known: new Map(), multipliers: new Map(), tierIds: new Map(), rows: new Map() };
  const balances = await lockBalances(trx, shop.id, ids, now, {
    columns: byOrders ? ['email', 'vip_tier_retained_until', 'amount_spent_window', 'orders_count_window', 'order_window_key'] : ['email'],
    each(c) {
      const id = Number(c.remote_id);
      buyers.known.set(id, (c.email as string | null) ?? null);
      if (byOrders) buyers.rows.set(id, c as unknown as SubjectRow);
      if (c.vip_tier_id === null || c.vip_tier_id === undefined) return;
      buyers.multipliers.set(id, tiers.get(Number(c.vip_tier_id)) ?? 1);
      buyers.tierIds.set(id, Number(c.vip_tier_id));
    },
  });
  return { ...buyers, balances };
}

/**
 * Writes what a settlement posts, with its order days and (with an order metric) the buyers'
 * order sums in the ledger's statement of balances (or alone, when nothing is posted); returns
 * the tier subjects of the customers whose order days changed.
 */
async function writeSettlement(
  trx: DB,
  shop: Shop,
  { postings, pending, days, buyers }: { postings: Posting[]; pending: Map<number, number>; days: OrderDays; buyers: Buyers },
  now: number,
): Promise<TierSubject[]> {
  const deltas = days.deltas(shop, now);
  const sums = shop.vip_tier_metric === 'points_earned' || deltas.size === 0 ? null : await orderSumsBefore(trx, shop, buyers.rows, deltas, now);
  // The ledger sets the sums of every customer it writes, all buyers: one that is no customer has no row to set.
  for (const id of sums === null ? [] : buyers.ids)
    if (!sums!.columns.has(id)) sums!.columns.set(id, { amount_spent_window: 0, orders_count_window: 0, order_window_key: null });
  let written = new Set<number>();
  if (postings.length > 0 || pending.size > 0) {
    await dateClawbacks(trx, shop.id, postings);
    const posted = await postWithEffects(trx, shop.id, postings, now, {
      locked: buyers.balances,
      pending,
      writes: [days.write()],
      ...(sums === null ? {} : { columns: sums.columns }),
    });
    // Every clawback was bounded by what the customer had: nothing can fail here.
    if (posted.failures.length > 0) throw new Error(`order settlement could not post: ${JSON.stringify(posted.failures)}`);
    written = new Set(posted.changed.map((c) => c.remoteId));
  } else await writeRows(trx, [days.write()]);
  if (sums === null) return [];
  await writeOrderSums(trx, shop, sums, written, now);
  // Customers not read with the buyers (an order moved to another customer, or not synced yet): their sums follow the written days.
  const others = new Map([...deltas].filter(([id]) => !buyers.rows.has(id)));
  return others.size === 0 ? sums.subjects : [...sums.subjects, ...(await tierSubjects(trx, shop, [...others.keys()], now, others))];
}

/** Writes the ledger columns of the orders settling changed: those that changed in any of them. */
async function updateChanged(trx: DB, shopId: number, changed: readonly OrderState[], before: ReadonlyMap<number, unknown[]>): Promise<void> {
  const columns = LEDGER_COLUMNS.filter((column, i) => changed.some((o) => o[column] !== before.get(o.remote_id)![i]));
  await updateRows(
    trx,
    'orders',
    ['shop_id', 'remote_id'],
    changed.map((o) => {
      const row: Record<string, unknown> = { shop_id: shopId, remote_id: o.remote_id };
      for (const column of columns) row[column] = o[column];
      return row;
    }),
  );
}

/** Moves what the order counts in its customer's order days; returns whether it changed. */
function recount(days: OrderDays, order: OrderState): boolean {
  const before: Counted | null =
    order.counted_customer_remote_id === null || order.counted_customer_remote_id === undefined
      ? null
      : {
          customer: order.counted_customer_remote_id,
          day: Number(order.counted_day),
          currency: String(order.counted_currency),
          amount: Number(order.counted_amount),
        };
  const after = countedOf(order);
  if (!days.move(before, after)) return false;
  order.counted_customer_remote_id = after?.customer ?? null;
  order.counted_day = after?.day ?? null;
  order.counted_currency = after?.currency ?? null;
  order.counted_amount = after?.amount ?? 0;
  return true;
}

/** The shop's campaigns that run while any of these orders that may earn now was placed. */
async function runningCampaigns(trx: DB, shopId: number, rows: readonly OrderState[]): Promise<Campaign[]> {
  let from = Infinity;
  let to = -Infinity;
  for (const order of rows) {
    if (order.earned_at !== null || !PAID.has(order.financial_status) || order.customer_remote_id === null) continue;
    from = Math.min(from, order.placed_at);
    to = Math.max(to, order.placed_at);
  }
  return from > to ? [] : campaignsDuring(trx, shopId, from, to);
}

/**
 * A clawback takes back points earned when the order's points were granted: VIP tier windows
 * count it on that day (ledger/earned-window.ts), read from the order's first grant.
 */
async function dateClawbacks(trx: DB, shopId: number, postings: readonly Posting[]): Promise<void> {
  const clawbacks = postings.filter((p) => p.entry.clawback && p.entry.points < 0);
  if (clawbacks.length === 0) return;
  const granted = await orderGrantTimes(trx, shopId, [...new Set(clawbacks.map((p) => p.entry.orderRemoteId!))]);
  for (const p of clawbacks) p.entry.earnedAt = granted.get(p.entry.orderRemoteId!);
}

/** What one settlement works with: its shop, its buyers, and what it collects to write. */
interface Settlement {
  shop: Shop;
  now: number;
  /** The buyers that are customers, with their e-mails. */
  known: Map<number, string | null>;
  /** What each buyer has available, as the postings so far leave it. */
  available: Map<number, { points: number; credits: number }>;
  postings: Posting[];
  addPending(customer: number, delta: number): void;
  /** The shop's campaigns running while the orders to earn were placed (campaigns.ts). */
  campaigns: readonly Campaign[];
  /** A buyer's VIP tier id, as they hold it before this write's events. */
  tierOf(customer: number): number | null;
}

/** The order's first paid status: it earns by the rule (nothing when there is none). */
function earn(
  { shop, now, known, available, postings, addPending, campaigns, tierOf }: Settlement,
  rule: EarningRule | undefined,
  order: OrderState,
  multiplier: (customer: number) => number,
): void {
  if (!PAID.has(order.financial_status)) return;
  const customer = order.customer_remote_id;
  // First seen refunded: it was paid and refunded in full, which earns nothing in the end, and
  // a late `paid` must not earn either.
  if (order.financial_status === 'refunded') {
    order.earned_at = now;
    order.points_customer_remote_id = customer;
    return;
  }
  // A guest order earns nothing; an order whose customer is not synced yet waits for them.
  if (customer === null) {
    order.earned_at = now;
    return;
  }
  if (!known.has(customer)) return;
  const earning = orderEarning(rule, order.total, order.currency, multiplier(customer), campaignsFor(campaigns, order.placed_at, tierOf(customer)));
  order.earned_at = now;
  order.campaign_id = earning.campaignId ?? null;
  order.points_customer_remote_id = customer;
  order.earning_rule_id = rule?.id ?? null;
  order.points_earned = earning.points;
  order.credits_earned = earning.credits;
  if (earning.points === 0 && earning.credits === 0) return;
  const releaseAt = shop.points_pending_days > 0 ? order.placed_at + shop.points_pending_days * DAY_MS : null;
  const pending = releaseAt !== null && releaseAt > now ? earning.points : 0;
  if (pending > 0) {
    order.points_pending = pending;
    order.pending_release_at = releaseAt;
    addPending(customer, pending);
  }
  const points = earning.points - pending;
  if (points === 0 && earning.credits === 0) return;
  postings.push(orderPosting(shop, order, customer, known.get(customer) ?? null, now, { source: 'order', points, credits: earning.credits }));
  const balance = available.get(customer);
  if (balance) {
    balance.points += points;
    balance.credits += earning.credits;
  }
}

/**
 * Refunds take back their share of what the order earned: pending points first, never below
 * zero. Returns whether it changed the order.
 */
function clawBack({ shop, now, known, available, postings, addPending }: Settlement, order: OrderState): boolean {
  const customer = order.points_customer_remote_id!;
  const full = order.financial_status === 'refunded';
  const refunded = PAID.has(order.financial_status) ? order.total_refunded : 0;
  let points = refundShare(order.points_earned, order.total, refunded, full) - order.points_reversed - order.points_unrecovered;
  let credits = refundShare(order.credits_earned, order.total, refunded, full) - order.credits_reversed - order.credits_unrecovered;
  if (points <= 0 && credits <= 0) return false;
  points = Math.max(0, points);
  credits = Math.max(0, credits);
  const fromPending = Math.min(points, order.points_pending);
  if (fromPending > 0) {
    order.points_pending -= fromPending;
    order.points_reversed += fromPending;
    if (order.points_pending === 0) order.pending_release_at = null;
    addPending(customer, -fromPending);
    points -= fromPending;
  }
  const balance = available.get(customer) ?? { points: 0, credits: 0 };
  const takePoints = Math.min(points, Math.max(0, balance.points));
  const takeCredits = Math.min(credits, Math.max(0, balance.credits));
  order.points_reversed += takePoints;
  order.points_unrecovered += points - takePoints;
  order.credits_reversed += takeCredits;
  order.credits_unrecovered += credits - takeCredits;
  balance.points -= takePoints;
  balance.credits -= takeCredits;
  if (takePoints > 0 || takeCredits > 0) {
    postings.push(orderPosting(shop, order, customer, known.get(customer) ?? null, now, { source: 'refund', points: -takePoints, credits: -takeCredits }));
  }
  return true;
}

function orderPosting(
  shop: Shop,
  order: OrderState,
  customer: number,
  email: string | null,
  now: number,
  what: { source: 'order' | 'refund'; points: number; credits: number },
): Posting {
  const grant = what.source === 'order';
  // Each field named: V8 (Node 20) builds `{ ...what, more }` on a slow path, some 50 µs an
  // order, a tenth of an earning import's time.
  return posting(
    { remoteId: customer, email },
    {
      source: what.source,
      points: what.points,
      credits: what.credits,
      internalNote: grant ? `Earned by order ${order.remote_id}` : `Refund of order ${order.remote_id}`,
      appliedAt: now,
      expiresAt: grant ? defaultExpiry(shop, now) : null,
      earningRuleId: order.earning_rule_id,
      orderRemoteId: order.remote_id,
      campaignId: order.campaign_id,
      clawback: !grant,
    },
  );
}
