import { sql, type Kysely } from 'kysely';
import { countRowsPerShop, isPostgres, shopTable } from './_schema.js';

// How many rows each shop has in each listed table, kept by triggers with every insert and
// delete, so that an unfiltered offset page's `last` link reads one row instead of counting
// up to 125,000 (docs/pagination.md).

/** The tables whose lists read their total from shop_counts. */
const COUNTED = [
  'customers',
  'orders',
  'subscription_contracts',
  'subscription_billing_attempts',
  'rewards',
  'vip_tiers',
  'referrals',
  'webhooks',
  'points_events',
  'redemptions',
];

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'shop_counts', ['table_name'], (t) =>
    t.addColumn('table_name', 'text', (c) => c.notNull()).addColumn('n', 'bigint', (c) => c.notNull()),
  ).execute();
  if (isPostgres(db)) {
    // One call per statement: a batch of 1000 events adds 1000 with one upsert per shop.
    await sql`create function shop_counts_insert() returns trigger language plpgsql as $$
      begin
        insert into shop_counts (shop_id, table_name, n) select shop_id, tg_table_name, count(*) from changed group by shop_id
          on conflict (shop_id, table_name) do update set n = shop_counts.n + excluded.n;
        return null;
      end $$`.execute(db);
    await sql`create function shop_counts_delete() returns trigger language plpgsql as $$
      begin
        update shop_counts s set n = s.n - d.n from (select shop_id, count(*) as n from changed group by shop_id) d
          where s.shop_id = d.shop_id and s.table_name = tg_table_name;
        return null;
      end $$`.execute(db);
  }
  for (const table of COUNTED) await countRowsPerShop(db, table);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of COUNTED) {
    await sql`drop trigger ${sql.raw(`${table}_count_insert`)}${isPostgres(db) ? sql` on ${sql.table(table)}` : sql``}`.execute(db);
    await sql`drop trigger ${sql.raw(`${table}_count_delete`)}${isPostgres(db) ? sql` on ${sql.table(table)}` : sql``}`.execute(db);
  }
  if (isPostgres(db)) {
    await sql`drop function shop_counts_insert()`.execute(db);
    await sql`drop function shop_counts_delete()`.execute(db);
  }
  await db.schema.dropTable('shop_counts').execute();
}
