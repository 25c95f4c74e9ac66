import { sql } from 'kysely';
import { updateRows, writeRows } from '../db/dialect.js';
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

  /** Writes the changes (one statement) and returns each customer's change within the shop's window and currency. */
  async write(trx: DB, shop: Shop, now: number): Promise<Map<number, { amount: number; orders: number }>> {
    const rows = [...this.rows.values()].filter((r) => r.amount !== 0 || r.orders !== 0);
    if (rows.length > 0)
      await writeRows(trx, [
        {
          insert: 'customer_order_days',
          rows,
          onConflict: { key: ['shop_id', 'customer_remote_id', 'day', 'currency'], update: [], add: ['amount', 'orders'] },
        },
      ]);
    const start = windowStart(shop.vip_tier_window, now);
    const byCustomer = new Map<number, { amount: number; orders: number }>();
    for (const r of rows) {
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
const SUBJECT_COLUMNS = [
  'remote_id',
  'email',
  'vip_tier_id',
  'vip_tier_retained_until',
  'points_earned_window',
  'amount_spent_window',
  'orders_count_window',
  'order_window_key',
] as const;

interface SubjectRow {
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
async function sumOrderDays(trx: DB, shop: Shop, remoteIds: readonly number[], now: number): Promise<Map<number, { amount: number; orders: number }>> {
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
  deltas?: ReadonlyMap<number, { amount: number; orders: number }>,
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

async function bringSums(
  trx: DB,
  shop: Shop,
  rows: SubjectRow[],
  now: number,
  deltas?: ReadonlyMap<number, { amount: number; orders: number }>,
): Promise<void> {
  const key = orderWindowKey(shop, now);
  const stale = rows.filter((r) => r.order_window_key !== key);
  const summed =
    stale.length === 0
      ? new Map()
      : await sumOrderDays(
          trx,
          shop,
          stale.map((r) => Number(r.remote_id)),
          now,
        );
  const writes: Record<string, unknown>[] = [];
  for (const row of rows) {
    const before = { amount: Number(row.amount_spent_window), orders: Number(row.orders_count_window) };
    let after = before;
    if (row.order_window_key !== key) after = summed.get(Number(row.remote_id)) ?? { amount: 0, orders: 0 };
    else {
      const d = deltas?.get(Number(row.remote_id));
      if (d !== undefined) after = { amount: before.amount + d.amount, orders: before.orders + d.orders };
    }
    const moved = after.amount !== before.amount || after.orders !== before.orders;
    if (!moved && row.order_window_key === key) continue;
    row.amount_spent_window = after.amount;
    row.orders_count_window = after.orders;
    row.order_window_key = key;
    writes.push({
      shop_id: shop.id,
      remote_id: Number(row.remote_id),
      amount_spent_window: after.amount,
      orders_count_window: after.orders,
      order_window_key: key,
      // The sums show as vip_tier_progress: updated_at moves only when they changed.
      ...(moved ? { updated_at: now } : {}),
    });
  }
  const [withTime, without] = [writes.filter((w) => 'updated_at' in w), writes.filter((w) => !('updated_at' in w))];
  if (withTime.length > 0) await updateRows(trx, 'customers', ['shop_id', 'remote_id'], withTime);
  if (without.length > 0) await updateRows(trx, 'customers', ['shop_id', 'remote_id'], without);
}
