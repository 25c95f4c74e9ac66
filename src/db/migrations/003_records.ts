import type { Kysely } from 'kysely';
import { idColumn, isPostgres, shopTable } from './_schema.js';

// Records synced from the commerce platform (keyed by remote_id) and native ones (keyed by a
// native id). Every column offered as a sort gets an index on (shop_id, column, key), so an
// offset page deep into the list is a walk over a narrow index, not a sort.

type Build = Parameters<typeof shopTable>[3];

const times = (t: any) => t.addColumn('created_at', 'bigint', (c: any) => c.notNull()).addColumn('updated_at', 'bigint', (c: any) => c.notNull());

async function sortIndexes(db: Kysely<any>, table: string, key: string, columns: string[]): Promise<void> {
  await keyIndex(db, table, key);
  for (const column of [...columns, 'created_at', 'updated_at']) {
    await db.schema.createIndex(`${table}_${column}`).on(table).columns(['shop_id', column, key]).execute();
  }
}

/**
 * Offset pages in key order skip index entries, not rows. PostgreSQL's primary key index is
 * already that narrow index (rows live in the heap); a SQLite WITHOUT ROWID table is its
 * primary key, whole rows in its leaves, so it gets a narrow index of (shop_id, key) as well.
 */
async function keyIndex(db: Kysely<any>, table: string, key: string): Promise<void> {
  if (!isPostgres(db)) await db.schema.createIndex(`${table}_${key}`).on(table).columns(['shop_id', key]).execute();
}

async function synced(db: Kysely<any>, table: string, build: Build, sorts: string[]): Promise<void> {
  await shopTable(db, table, ['remote_id'], (t) => times(build(t.addColumn('remote_id', 'bigint', (c) => c.notNull())))).execute();
  await sortIndexes(db, table, 'remote_id', sorts);
}

async function native(db: Kysely<any>, table: string, build: Build, sorts: string[]): Promise<void> {
  await shopTable(db, table, ['id'], (t) => times(build(t.addColumn('id', 'bigint', idColumn(db))))).execute();
  await sortIndexes(db, table, 'id', sorts);
}

export async function up(db: Kysely<any>): Promise<void> {
  // customers exists since 001; it gains its sort indexes.
  await keyIndex(db, 'customers', 'remote_id');
  await db.schema.createIndex('customers_created_at').on('customers').columns(['shop_id', 'created_at', 'remote_id']).execute();
  await db.schema.createIndex('customers_updated_at').on('customers').columns(['shop_id', 'updated_at', 'remote_id']).execute();

  await synced(
    db,
    'orders',
    (t) =>
      t
        .addColumn('customer_remote_id', 'bigint')
        .addColumn('total', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('financial_status', 'text', (c) => c.notNull())
        .addColumn('placed_at', 'bigint', (c) => c.notNull()),
    ['total', 'placed_at'],
  );
  await db.schema.createIndex('orders_customer').on('orders').columns(['shop_id', 'customer_remote_id']).execute();

  await synced(
    db,
    'subscription_contracts',
    (t) =>
      t
        .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('next_billing_date', 'bigint', (c) => c.notNull()),
    ['next_billing_date'],
  );

  await native(
    db,
    'subscription_billing_attempts',
    (t) =>
      t
        .addColumn('subscription_contract_remote_id', 'bigint', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('failure_reason', 'text')
        .addColumn('attempted_at', 'bigint', (c) => c.notNull()),
    ['amount', 'attempted_at'],
  );

  await native(
    db,
    'rewards',
    (t) =>
      t
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('points_price', 'integer', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('value', 'bigint', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull()),
    ['name', 'points_price'],
  );

  await native(db, 'vip_tiers', (t) => t.addColumn('name', 'text', (c) => c.notNull()).addColumn('points_threshold', 'integer', (c) => c.notNull()), []);
  // Unique per shop; they double as the sort indexes (the key breaks no ties there).
  await db.schema.createIndex('vip_tiers_name').unique().on('vip_tiers').columns(['shop_id', 'name']).execute();
  await db.schema.createIndex('vip_tiers_points_threshold').unique().on('vip_tiers').columns(['shop_id', 'points_threshold']).execute();

  await native(
    db,
    'referrals',
    (t) =>
      t
        .addColumn('referrer_remote_id', 'bigint', (c) => c.notNull())
        .addColumn('referred_email', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull()),
    [],
  );

  await native(
    db,
    'webhooks',
    (t) =>
      t
        .addColumn('topic', 'text', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull()),
    ['topic'],
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['webhooks', 'referrals', 'vip_tiers', 'rewards', 'subscription_billing_attempts', 'subscription_contracts', 'orders']) {
    await db.schema.dropTable(table).execute();
  }
  await db.schema.dropIndex('customers_updated_at').execute();
  await db.schema.dropIndex('customers_created_at').execute();
  if (!isPostgres(db)) await db.schema.dropIndex('customers_remote_id').execute();
}
