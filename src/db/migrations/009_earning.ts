import { sql, type Kysely } from 'kysely';
import { countRowsPerShop, idColumn, shopTable } from './_schema.js';

// Earning rules, and the ledger state that orders, customers and billing attempts drive
// (docs/earning.md): what an order earned and what its refunds took back, points pending
// until a release date, the next birthday grant due, and the links from events to the rule
// and the order that caused them.

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'earning_rules', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('enabled', 'integer', (c) => c.notNull())
      .addColumn('points_per_unit', 'bigint')
      .addColumn('unit_amount', 'bigint')
      .addColumn('min_order_total', 'bigint')
      .addColumn('currency', 'text')
      .addColumn('points_amount', 'bigint')
      .addColumn('credits_amount', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull()),
  ).execute();
  // At most one enabled rule per kind: the index settles racing writes.
  await db.schema
    .createIndex('earning_rules_enabled_kind')
    .on('earning_rules')
    .columns(['shop_id', 'kind'])
    .unique()
    .where(sql.ref('enabled'), '=', 1)
    .execute();
  for (const column of ['created_at', 'updated_at']) {
    await db.schema.createIndex(`earning_rules_${column}`).on('earning_rules').columns(['shop_id', column, 'id']).execute();
  }
  await countRowsPerShop(db, 'earning_rules');

  await db.schema
    .alterTable('shops')
    .addColumn('points_pending_days', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  const orderColumns: [string, boolean][] = [
    ['total_refunded', true],
    // Who the order's points went to (its customer when it earned), and when it earned.
    ['points_customer_remote_id', false],
    ['earned_at', false],
    ['earning_rule_id', false],
    ['points_earned', true],
    ['credits_earned', true],
    ['points_reversed', true],
    ['credits_reversed', true],
    ['points_unrecovered', true],
    ['credits_unrecovered', true],
    ['points_pending', true],
    ['pending_release_at', false],
  ];
  for (const [name, zero] of orderColumns) {
    await db.schema
      .alterTable('orders')
      .addColumn(name, 'bigint', (c) => (zero ? c.notNull().defaultTo(0) : c))
      .execute();
  }
  // The release job's queue: orders whose pending points fall due.
  await db.schema
    .createIndex('orders_pending_release')
    .on('orders')
    .columns(['pending_release_at', 'shop_id', 'remote_id'])
    .where(sql.ref('points_pending'), '>', 0)
    .execute();

  await db.schema.alterTable('customers').addColumn('birthday_next_at', 'bigint').execute();
  await db.schema.alterTable('customers').addColumn('birthday_granted_year', 'integer').execute();
  // The birthday job's queue: customers whose next birthday grant is due.
  await db.schema
    .createIndex('customers_birthday_due')
    .on('customers')
    .columns(['birthday_next_at', 'shop_id', 'remote_id'])
    .where(sql.ref('birthday_next_at'), 'is not', null)
    .execute();

  await db.schema.alterTable('points_events').addColumn('earning_rule_id', 'bigint').execute();
  await db.schema.alterTable('points_events').addColumn('order_remote_id', 'bigint').execute();
  await db.schema
    .createIndex('points_events_order')
    .on('points_events')
    .columns(['shop_id', 'order_remote_id', 'id'])
    .where(sql.ref('order_remote_id'), 'is not', null)
    .execute();
  // Existing customers with a birthday: -1 is due at once and is no birthday, so the job's
  // first run only schedules their next one.
  await sql`update customers set birthday_next_at = -1 where birthday is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('points_events_order').execute();
  for (const column of ['order_remote_id', 'earning_rule_id']) await db.schema.alterTable('points_events').dropColumn(column).execute();
  await db.schema.dropIndex('customers_birthday_due').execute();
  for (const column of ['birthday_granted_year', 'birthday_next_at']) await db.schema.alterTable('customers').dropColumn(column).execute();
  await db.schema.dropIndex('orders_pending_release').execute();
  for (const column of [
    'pending_release_at',
    'points_pending',
    'credits_unrecovered',
    'points_unrecovered',
    'credits_reversed',
    'points_reversed',
    'credits_earned',
    'points_earned',
    'earning_rule_id',
    'earned_at',
    'points_customer_remote_id',
    'total_refunded',
  ]) {
    await db.schema.alterTable('orders').dropColumn(column).execute();
  }
  await db.schema.alterTable('shops').dropColumn('points_pending_days').execute();
  await sql`delete from shop_counts where table_name = 'earning_rules'`.execute(db);
  await db.schema.dropTable('earning_rules').execute();
}
