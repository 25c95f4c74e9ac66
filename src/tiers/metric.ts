import { sql } from 'kysely';
import { updateRows, type RowWrite } from '../db/dialect.js';
import type { CustomerOrderDaysTable, DB } from '../db/tables.js';
import { dayOf, windowStart } from '../ledger/earned-window.js';
import type { Shop } from '../shops/repository.js';
import type { TierSubject } from './tiers.js';

// What a customer's VIP tier is judged by (docs/earning.md, "VIP tiers"): the shop's
// vip_tier_metric over its vip_tier_window. points_earned is the ledger's own sum
// (customers.points_earned_window). amount_spent (paid totals less refunds, in the shop's
// currency) and orders_count (paid orders, refunded ones not) are kept per customer and day in
// customer_order_days by every order write, whatever the metric, at a constant cost: an order
// records what it counted (orders.counted_*), and a later write moves only the difference.
// While the metric is one of these, each customer's sums over the window are kept on the
// customer (amount_spent_window, orders_count_window) for a key: the shop's basis (moved on by
// a change of metric or currency) and the window's first day. A customer whose key is another
// one has the sums made again from the order days when next judged.

/** An order as counted: for whom, on which day, in which currency, how much (hundredths). */
export interface Counted {
  customer: number;
  day: number;
  currency: string;
  amount: number;
}

/** What an order counts for the order metrics: a paid order of a customer, less its refunds. */
export function countedOf(order: {
  customer_remote_id: number | null;
  financial_status: string;
  total: number;
  total_refunded: number;
  currency: string;
  placed_at: number;
}): Counted | null {
  if (order.customer_remote_id === null) return null;
  if (order.financial_status !== 'paid' && order.financial_status !== 'partially_refunded') return null;
  return { customer: order.customer_remote_id, day: dayOf(order.placed_at), currency: order.currency, amount: Math.max(0, order.total - order.total_refunded) };
}

const same = (a: Counted | null, b: Counted | null) =>
  a === b || (a !== null && b !== null && a.customer === b.customer && a.day === b.day && a.currency === b.currency && a.amount === b.amount);

/** A customer's order sums, or their change: amount spent (hundredths) and orders paid. */
export interface OrderSums {
  amount: number;
  orders: number;
}

/** The order days' changes of orders that counted `before` and count `after` now, summed by day. */
export class OrderDays {
  private readonly rows = new Map<string, CustomerOrderDaysTable>();

  constructor(private readonly shopId: number) {}

  /** Adds an order's change; false when it counts as it did. */
  move(before: Counted | null, after: Counted | null): boolean {
    if (same(before, after)) return false;
    if (before !== null) this.add(before, -1);
    if (after !== null) this.add(after, 1);
    return true;
  }

  private add(c: Counted, sign: number): void {
    const key = `${c.customer}:${c.day}:${c.currency}`;
    const row = this.rows.get(key) ?? { shop_id: this.shopId, customer_remote_id: c.customer, day: c.day, currency: c.currency, amount: 0, orders: 0 };
    row.amount += sign * c.amount;
    row.orders += sign;
    this.rows.set(key, row);
  }

  get size(): number {
    return this.rows.size;
  }

  /** The changes as rows of customer_order_days, to add to what is stored (an upsert that adds). */
  write(): RowWrite {
    const rows = [...this.rows.values()].filter((r) => r.amount !== 0 || r.orders !== 0);
    return {
      insert: 'customer_order_days',
      rows,
      onConflict: { key: ['shop_id', 'customer_remote_id', 'day', 'currency'], update: [], add: ['amount', 'orders'] },
    };
  }

  /** Each customer's change within the shop's window and currency (every customer of a change, 0 outside the window). */
  deltas(shop: Shop, now: number): Map<number, OrderSums> {
    const start = windowStart(shop.vip_tier_window, now);
    const byCustomer = new Map<number, OrderSums>();
    for (const r of this.rows.values()) {
      if (r.amount === 0 && r.orders === 0) continue;
      const sum = byCustomer.get(r.customer_remote_id) ?? { amount: 0, orders: 0 };
      if (r.day >= start) {
        sum.orders += r.orders;
        if (r.currency === shop.currency) sum.amount += r.amount;
      }
      byCustomer.set(r.customer_remote_id, sum);
    }
    return byCustomer;
  }
}

/** The customer columns a TierSubject is read from. */
export const SUBJECT_COLUMNS = [
  'remote_id',
  'email',
  'vip_tier_id',
  'vip_tier_retained_until',
  'points_earned_window',
  'amount_spent_window',
  'orders_count_window',
  'order_window_key',
] as const;

export interface SubjectRow {
  remote_id: number;
  email: string | null;
  vip_tier_id: number | null;
  vip_tier_retained_until: number | null;
  points_earned_window: number;
  amount_spent_window: number;
  orders_count_window: number;
  order_window_key: string | null;
}

/** The key of the order sums the shop's customers should hold now. */
export const orderWindowKey = (shop: Shop, now: number): string => `${shop.vip_tier_basis}:${windowStart(shop.vip_tier_window, now)}`;

/** A customer's value in the shop's metric (amount_spent in currency units), and as stored (hundredths). */
export function metricValue(
  shop: Pick<Shop, 'vip_tier_metric'>,
  row: Pick<SubjectRow, 'points_earned_window' | 'amount_spent_window' | 'orders_count_window'>,
) {
  if (shop.vip_tier_metric === 'amount_spent') return { value: Number(row.amount_spent_window) / 100, stored: Number(row.amount_spent_window) };
  const n = Number(shop.vip_tier_metric === 'orders_count' ? row.orders_count_window : row.points_earned_window);
  return { value: n, stored: n };
}

/** Makes the order sums of customers whose key is another one again from their order days (one statement). */
async function sumOrderDays(trx: DB, shop: Shop, remoteIds: readonly number[], now: number): Promise<Map<number, OrderSums>> {
  const start = windowStart(shop.vip_tier_window, now);
  const rows = await trx
    .selectFrom('customer_order_days')
    .select((eb) => [
      'customer_remote_id',
      eb.fn.sum<number>(sql`case when currency = ${shop.currency ?? ''} then amount else 0 end`).as('amount'),
      eb.fn.sum<number>('orders').as('orders'),
    ])
    .where('shop_id', '=', shop.id)
    .where('customer_remote_id', 'in', remoteIds)
    .where('day', '>=', start)
    .groupBy('customer_remote_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.customer_remote_id), { amount: Number(r.amount), orders: Number(r.orders) }]));
}

/**
 * The tier subjects of these customers of the shop, judged by its metric: with the order
 * metrics, their order sums are first brought to the current key (changes `deltas` from an
 * order write added where the key holds, made again from the order days where it does not).
 */
export async function tierSubjects(
  trx: DB,
  shop: Shop,
  remoteIds: readonly number[],
  now: number,
  deltas?: ReadonlyMap<number, OrderSums>,
): Promise<TierSubject[]> {
  const subjects: TierSubject[] = [];
  for (let i = 0; i < remoteIds.length; i += 500) {
    const rows = (await trx
      .selectFrom('customers')
      .select(SUBJECT_COLUMNS)
      .where('shop_id', '=', shop.id)
      .where('remote_id', 'in', remoteIds.slice(i, i + 500))
      .orderBy('remote_id')
      .execute()) as unknown as SubjectRow[];
    if (shop.vip_tier_metric !== 'points_earned') await bringSums(trx, shop, rows, now, deltas);
    subjects.push(...rows.map((row) => subjectOf(shop, row)));
  }
  return subjects;
}

function subjectOf(shop: Shop, row: SubjectRow): TierSubject {
  return {
    remoteId: Number(row.remote_id),
    email: row.email,
    ...metricValue(shop, row),
    tierId: row.vip_tier_id === null ? null : Number(row.vip_tier_id),
    retainedUntil: row.vip_tier_retained_until === null ? null : Number(row.vip_tier_retained_until),
  };
}

/** The order sums' columns of a customer, as an order write leaves them. */
export type SumColumns = Pick<SubjectRow, 'amount_spent_window' | 'orders_count_window' | 'order_window_key'>;

/**
 * Moves a customer's order sums to the key (`summed`: made again from the order days, where
 * the key is another one) plus the change `delta`, on the row itself; says whether they moved
 * and whether the row must be written.
 */
function moveSums(row: SubjectRow, key: string, summed: OrderSums | undefined, delta: OrderSums | undefined): { moved: boolean; write: boolean } {
  const before = { amount: Number(row.amount_spent_window), orders: Number(row.orders_count_window) };
  const base = row.order_window_key === key ? before : (summed ?? { amount: 0, orders: 0 });
  const after = { amount: base.amount + (delta?.amount ?? 0), orders: base.orders + (delta?.orders ?? 0) };
  const moved = after.amount !== before.amount || after.orders !== before.orders;
  const write = moved || row.order_window_key !== key;
  row.amount_spent_window = after.amount;
  row.orders_count_window = after.orders;
  row.order_window_key = key;
  return { moved, write };
}

/** Writes the sums of these rows; updated_at moves only where they changed (they show as vip_tier_progress). */
async function writeSums(trx: DB, shop: Shop, rows: readonly SubjectRow[], moved: ReadonlySet<number>, now: number): Promise<void> {
  const write = (row: SubjectRow, at: object) => ({
    shop_id: shop.id,
    remote_id: Number(row.remote_id),
    amount_spent_window: row.amount_spent_window,
    orders_count_window: row.orders_count_window,
    order_window_key: row.order_window_key,
    ...at,
  });
  const withTime = rows.filter((r) => moved.has(Number(r.remote_id))).map((r) => write(r, { updated_at: now }));
  const without = rows.filter((r) => !moved.has(Number(r.remote_id))).map((r) => write(r, {}));
  if (withTime.length > 0) await updateRows(trx, 'customers', ['shop_id', 'remote_id'], withTime);
  if (without.length > 0) await updateRows(trx, 'customers', ['shop_id', 'remote_id'], without);
}

/** Brings the rows' sums to the current key after the order days were written (plus `deltas` where the key holds), and writes them. */
async function bringSums(trx: DB, shop: Shop, rows: SubjectRow[], now: number, deltas?: ReadonlyMap<number, OrderSums>): Promise<void> {
  const key = orderWindowKey(shop, now);
  const stale = rows.filter((r) => r.order_window_key !== key).map((r) => Number(r.remote_id));
  const summed = stale.length === 0 ? new Map<number, OrderSums>() : await sumOrderDays(trx, shop, stale, now);
  const moved = new Set<number>();
  const writes: SubjectRow[] = [];
  for (const row of rows) {
    const id = Number(row.remote_id);
    // Made again from the order days, the sums hold this write's changes already.
    const change = moveSums(row, key, summed.get(id), row.order_window_key === key ? deltas?.get(id) : undefined);
    if (change.moved) moved.add(id);
    if (change.write) writes.push(row);
  }
  await writeSums(trx, shop, writes, moved, now);
}

/** An order write's order sums, worked out before its order days are written (orderSumsBefore). */
export interface OrderSumsPlan {
  /** The sums' columns of every customer read, as the write leaves them: set with their balances (PostOptions.columns). */
  columns: Map<number, SumColumns>;
  /** The customers whose sums must be written (moved, or brought to the current key), and those whose sums moved. */
  writes: SubjectRow[];
  moved: Set<number>;
  /** The tier subjects of the customers whose order days change, as read here. */
  subjects: TierSubject[];
}

/**
 * The order sums of these customers (read and locked with SUBJECT_COLUMNS, by remote_id) after
 * an order write's changes `deltas`, worked out before its order days are written, so that
 * they are set with the customers' balances: where the key is another one, made again from
 * the order days as stored plus the change. Changes of customers not read are left out.
 */
export async function orderSumsBefore(
  trx: DB,
  shop: Shop,
  rows: ReadonlyMap<number, SubjectRow>,
  deltas: ReadonlyMap<number, OrderSums>,
  now: number,
): Promise<OrderSumsPlan> {
  const key = orderWindowKey(shop, now);
  const stale = [...deltas.keys()].filter((id) => rows.has(id) && rows.get(id)!.order_window_key !== key);
  const summed = stale.length === 0 ? new Map<number, OrderSums>() : await sumOrderDays(trx, shop, stale, now);
  const plan: OrderSumsPlan = { columns: new Map(), writes: [], moved: new Set(), subjects: [] };
  for (const [id, row] of rows) {
    if (deltas.has(id)) {
      const change = moveSums(row, key, summed.get(id), deltas.get(id));
      if (change.moved) plan.moved.add(id);
      if (change.write) plan.writes.push(row);
      plan.subjects.push(subjectOf(shop, row));
    }
    plan.columns.set(id, {
      amount_spent_window: Number(row.amount_spent_window),
      orders_count_window: Number(row.orders_count_window),
      order_window_key: row.order_window_key,
    });
  }
  return plan;
}

/** Writes the sums of an OrderSumsPlan's customers that the ledger did not (`written`: those it set with their balances). */
export async function writeOrderSums(trx: DB, shop: Shop, plan: OrderSumsPlan, written: ReadonlySet<number>, now: number): Promise<void> {
  await writeSums(
    trx,
    shop,
    plan.writes.filter((r) => !written.has(Number(r.remote_id))),
    plan.moved,
    now,
  );
}
