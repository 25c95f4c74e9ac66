import { sql, type Kysely } from 'kysely';
import { countRowsPerShop, idColumn, isPostgres, shopTable } from './_schema.js';

// Campaigns (docs/earning.md, "Campaigns"): a time-boxed multiplier or bonus on orders, the
// links from orders and events to the campaign they earned under, the instant each campaign's
// next announcement (campaign.started, campaign.ended) falls due, and webhooks subscribed to
// several topics at once.

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'campaigns', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('starts_at', 'bigint', (c) => c.notNull())
      .addColumn('ends_at', 'bigint', (c) => c.notNull())
      // Hundredths: 150 is ×1.50.
      .addColumn('multiplier', 'bigint')
      .addColumn('bonus_points', 'bigint')
      // A JSON array of VIP tier ids; [] for every customer.
      .addColumn('vip_tier_ids', 'text', (c) => c.notNull())
      .addColumn('cancelled_at', 'bigint')
      // campaign.started and campaign.ended, once each: what was sent, and when the next is due.
      .addColumn('started_announced', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('ended_announced', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('announce_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull()),
  ).execute();
  if (!isPostgres(db)) await db.schema.createIndex('campaigns_id').on('campaigns').columns(['shop_id', 'id']).execute();
  for (const column of ['name', 'starts_at', 'ends_at', 'created_at', 'updated_at']) {
    await db.schema.createIndex(`campaigns_${column}`).on('campaigns').columns(['shop_id', column, 'id']).execute();
  }
  // The job's due announcements, across shops.
  await db.schema
    .createIndex('campaigns_announce_at')
    .on('campaigns')
    .columns(['announce_at', 'shop_id', 'id'])
    .where(sql.ref('announce_at'), 'is not', null)
    .execute();
  await countRowsPerShop(db, 'campaigns');

  await db.schema.alterTable('orders').addColumn('campaign_id', 'bigint').execute();
  await db.schema.alterTable('points_events').addColumn('campaign_id', 'bigint').execute();

  // A webhook's topics: a JSON array, ["*"] for all; the one topic of every existing webhook.
  await db.schema.alterTable('webhooks').addColumn('topics', 'text').execute();
  await sql`update webhooks set topics = '["' || topic || '"]'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').dropColumn('topics').execute();
  await db.schema.alterTable('points_events').dropColumn('campaign_id').execute();
  await db.schema.alterTable('orders').dropColumn('campaign_id').execute();
  await sql`delete from shop_counts where table_name = 'campaigns'`.execute(db);
  await db.schema.dropTable('campaigns').execute();
}
