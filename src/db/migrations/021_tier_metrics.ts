import { sql, type Kysely } from 'kysely';
import { shopTable } from './_schema.js';

// VIP tiers judged by another metric, kept for a while after a drop, and redemptions given back
// when the order that used their code is refunded (docs/earning.md, "VIP tiers" and "Orders").
// - shops: the metric (points_earned, amount_spent, orders_count), the currency amount_spent
//   counts, the retention, and vip_tier_basis, moved on with every change of metric or
//   currency so that each customer's order sums are made again from the order days.
// - customer_order_days: per customer, day and currency, the paid totals less refunds and the
//   orders counted (the constant-cost sums, as customer_earned_days for points); each order
//   records what it counted, so that a later write moves only the difference.
// - customers: their order sums over the window (kept while the shop's metric needs them, for
//   the key order_window_key names) and until when a dropped tier is kept.
// - orders: their discount codes; redemptions: the order that used their code.

const DAY = 86_400_000;

async function addColumns(db: Kysely<any>, table: string, columns: [string, string, (c: any) => any][]): Promise<void> {
  for (const [name, type, build] of columns)
    await db.schema
      .alterTable(table)
      .addColumn(name, type as never, build)
      .execute();
}

export async function up(db: Kysely<any>): Promise<void> {
  const same = (c: any) => c;
  await addColumns(db, 'shops', [
    ['vip_tier_metric', 'text', (c) => c.notNull().defaultTo('points_earned')],
    ['vip_tier_retention_days', 'integer', same],
    ['currency', 'text', same],
    ['vip_tier_basis', 'bigint', (c) => c.notNull().defaultTo(0)],
    ['restore_redeemed_points_on_refund', 'integer', (c) => c.notNull().defaultTo(1)],
  ]);
  await addColumns(db, 'customers', [
    ['vip_tier_retained_until', 'bigint', same],
    ['amount_spent_window', 'bigint', (c) => c.notNull().defaultTo(0)],
    ['orders_count_window', 'bigint', (c) => c.notNull().defaultTo(0)],
    ['order_window_key', 'text', same],
  ]);
  await db.schema.createIndex('customers_retained').on('customers').columns(['shop_id', 'vip_tier_retained_until']).execute();
  await addColumns(db, 'orders', [
    ['discount_codes', 'text', same],
    ['counted_customer_remote_id', 'bigint', same],
    ['counted_day', 'bigint', same],
    ['counted_currency', 'text', same],
    ['counted_amount', 'bigint', (c) => c.notNull().defaultTo(0)],
  ]);
  await addColumns(db, 'redemptions', [['order_remote_id', 'bigint', same]]);
  await db.schema.createIndex('redemptions_order').on('redemptions').columns(['shop_id', 'order_remote_id']).execute();
  await addColumns(db, 'vip_tier_changes', [['metric', 'text', (c) => c.notNull().defaultTo('points_earned')]]);
  await shopTable(db, 'customer_order_days', ['customer_remote_id', 'day', 'currency'], (t) =>
    t
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('day', 'bigint', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('orders', 'bigint', (c) => c.notNull()),
  ).execute();

  // The orders already written: a paid one counts for its customer on the day it was placed.
  await sql`update orders set counted_customer_remote_id = customer_remote_id, counted_day = placed_at / ${sql.lit(DAY)},
    counted_currency = currency, counted_amount = total - total_refunded
    where customer_remote_id is not null and financial_status in ('paid', 'partially_refunded')`.execute(db);
  await sql`insert into customer_order_days (shop_id, customer_remote_id, day, currency, amount, orders)
    select shop_id, counted_customer_remote_id, counted_day, counted_currency, sum(counted_amount), count(*)
    from orders where counted_customer_remote_id is not null
    group by shop_id, counted_customer_remote_id, counted_day, counted_currency`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('customer_order_days').execute();
  await db.schema.dropIndex('redemptions_order').execute();
  await db.schema.dropIndex('customers_retained').execute();
  const drop = async (table: string, columns: string[]) => {
    for (const column of columns) await db.schema.alterTable(table).dropColumn(column).execute();
  };
  await drop('vip_tier_changes', ['metric']);
  await drop('redemptions', ['order_remote_id']);
  await drop('orders', ['discount_codes', 'counted_customer_remote_id', 'counted_day', 'counted_currency', 'counted_amount']);
  await drop('customers', ['vip_tier_retained_until', 'amount_spent_window', 'orders_count_window', 'order_window_key']);
  await drop('shops', ['vip_tier_metric', 'vip_tier_retention_days', 'currency', 'vip_tier_basis', 'restore_redeemed_points_on_refund']);
}
