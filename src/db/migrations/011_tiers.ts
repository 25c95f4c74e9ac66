import { sql, type Kysely } from 'kysely';
import { idColumn, shopTable } from './_schema.js';

// VIP tiers that customers reach (docs/earning.md, "VIP tiers"): a tier's earning multiplier,
// each customer's tier, the history of tier changes, and the re-tiering of a shop's customers
// after its tiers change (a cursor over its customers, so that it runs in bounded steps).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('vip_tiers')
    .addColumn('earning_multiplier', 'bigint', (c) => c.notNull().defaultTo(100))
    .execute();
  await db.schema.alterTable('customers').addColumn('vip_tier_id', 'bigint').execute();
  await db.schema.createIndex('customers_vip_tier').on('customers').columns(['shop_id', 'vip_tier_id', 'remote_id']).execute();
  // Re-tiering after a tier changed: null when done, else the last remote_id re-tiered (0 at the start).
  await db.schema.alterTable('shops').addColumn('retier_after', 'bigint').execute();
  await shopTable(db, 'vip_tier_changes', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('from_tier_id', 'bigint')
      .addColumn('from_tier_name', 'text')
      .addColumn('to_tier_id', 'bigint')
      .addColumn('to_tier_name', 'text')
      .addColumn('points_earned', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('vip_tier_changes_customer').on('vip_tier_changes').columns(['shop_id', 'customer_remote_id', 'id']).execute();
  // Shops that had tiers before tiers were computed: their customers are tiered once.
  await sql`update shops set retier_after = 0 where exists (select 1 from vip_tiers t where t.shop_id = shops.id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('vip_tier_changes').execute();
  await db.schema.alterTable('shops').dropColumn('retier_after').execute();
  await db.schema.dropIndex('customers_vip_tier').execute();
  await db.schema.alterTable('customers').dropColumn('vip_tier_id').execute();
  await db.schema.alterTable('vip_tiers').dropColumn('earning_multiplier').execute();
}
