import type { Kysely } from 'kysely';
import { idColumn, shopTable } from './_schema.js';

// Rewards that customers redeem: a reward's own rules (a limit per customer, a code prefix,
// how long its codes are valid), the pool of codes a merchant uploads, and the redemptions.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('rewards').addColumn('limit_per_customer', 'integer').execute();
  await db.schema.alterTable('rewards').addColumn('code_prefix', 'text').execute();
  await db.schema.alterTable('rewards').addColumn('code_valid_days', 'integer').execute();
  // 1 once codes were uploaded: its redemptions issue pool codes, never generated ones.
  await db.schema
    .alterTable('rewards')
    .addColumn('has_code_pool', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  // Codes uploaded for a reward; redemption_id is set when a redemption issues the code.
  await shopTable(db, 'reward_codes', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('reward_id', 'bigint', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('redemption_id', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('reward_codes_code').on('reward_codes').columns(['shop_id', 'code']).unique().execute();
  // A reward's unused codes (redemption_id null), oldest first; and whether it ever had a pool.
  await db.schema.createIndex('reward_codes_pool').on('reward_codes').columns(['shop_id', 'reward_id', 'redemption_id', 'id']).execute();

  await shopTable(db, 'redemptions', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('reward_id', 'bigint', (c) => c.notNull())
      .addColumn('reward_name', 'text', (c) => c.notNull())
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('points_spent', 'bigint', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('points_event_id', 'bigint', (c) => c.notNull())
      .addColumn('void_event_id', 'bigint')
      .addColumn('used_at', 'bigint')
      .addColumn('voided_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull()),
  ).execute();
  // Every code a shop has issued, from a pool or generated, is unique in the shop.
  await db.schema.createIndex('redemptions_code').on('redemptions').columns(['shop_id', 'code']).unique().execute();
  await db.schema.createIndex('redemptions_customer').on('redemptions').columns(['shop_id', 'customer_remote_id', 'id']).execute();
  await db.schema.createIndex('redemptions_reward_customer').on('redemptions').columns(['shop_id', 'reward_id', 'customer_remote_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('redemptions').execute();
  await db.schema.dropTable('reward_codes').execute();
  for (const column of ['has_code_pool', 'code_valid_days', 'code_prefix', 'limit_per_customer'])
    await db.schema.alterTable('rewards').dropColumn(column).execute();
}
