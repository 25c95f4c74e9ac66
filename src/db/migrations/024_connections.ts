import { sql, type Kysely } from 'kysely';
import { countRowsPerShop, idColumn, shopTable } from './_schema.js';

// Store connections (docs/connections.md): a Shopify or WooCommerce store that sends its
// webhooks to /ingest/v1/{platform}/{id}. Every delivery is logged once per dedupe key (the
// unique key settles two copies that arrive at once on two processes); refunds are recorded once
// per refund id, so an order's own refund figures and refunds/create never count one twice;
// the source's updated_at is kept per order and customer, so an older payload changes nothing.
// Every key holds shop_id first (DESIGN 18).

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'connections', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('platform', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('shop_domain', 'text')
      .addColumn('store_url', 'text')
      // The platform's signing secret: written, never shown.
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('earn_on', 'text', (c) => c.notNull())
      .addColumn('accept_test_orders', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull()),
  ).execute();
  for (const column of ['name', 'created_at', 'updated_at']) {
    await db.schema.createIndex(`connections_${column}`).on('connections').columns(['shop_id', column, 'id']).execute();
  }
  // Deliveries name their connection by id alone (/ingest/v1/{platform}/{id}), before the shop is known.
  await db.schema.createIndex('connections_by_id').on('connections').column('id').execute();
  await countRowsPerShop(db, 'connections');

  await deliveriesTable(db);

  await shopTable(db, 'connection_refunds', ['refund_id'], (t) =>
    t
      .addColumn('refund_id', 'bigint', (c) => c.notNull())
      .addColumn('order_remote_id', 'bigint', (c) => c.notNull())
      // Integer hundredths, in the order's currency.
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('connection_refunds_order').on('connection_refunds').columns(['shop_id', 'order_remote_id']).execute();

  // The source's updated_at of each order and customer applied, and what an order's own payload
  // said was refunded (hundredths), to which recorded refunds are compared.
  await shopTable(db, 'connection_sources', ['kind', 'remote_id'], (t) =>
    t
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('remote_id', 'bigint', (c) => c.notNull())
      .addColumn('source_updated_at', 'bigint', (c) => c.notNull())
      .addColumn('own_refunded', 'bigint'),
  ).execute();
}

/** Every delivery a connection received, once per dedupe key, with what it did. */
async function deliveriesTable(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'connection_deliveries', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('connection_id', 'bigint', (c) => c.notNull())
      .addColumn('topic', 'text', (c) => c.notNull())
      .addColumn('dedupe_key', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      // applied | duplicate | stale | ignored | deferred | failed (duplicates are answered, not kept).
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      // What it wrote: `customer` or `order`, and its remote_id.
      .addColumn('resource', 'text')
      .addColumn('resource_id', 'bigint')
      // The customer it concerned, so that erasing them erases their kept bodies too.
      .addColumn('customer_remote_id', 'bigint')
      .addColumn('body_bytes', 'integer', (c) => c.notNull())
      .addColumn('replayed_at', 'bigint')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addForeignKeyConstraint('connection_deliveries_connection', ['shop_id', 'connection_id'], 'connections', ['shop_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      ),
  ).execute();
  await db.schema
    .createIndex('connection_deliveries_dedupe')
    .unique()
    .on('connection_deliveries')
    .columns(['shop_id', 'connection_id', 'dedupe_key'])
    .execute();
  await db.schema.createIndex('connection_deliveries_connection').on('connection_deliveries').columns(['shop_id', 'connection_id', 'id']).execute();
  await db.schema.createIndex('connection_deliveries_status').on('connection_deliveries').columns(['shop_id', 'connection_id', 'status', 'id']).execute();
  // Deferred refunds wait for their order.
  await db.schema
    .createIndex('connection_deliveries_waiting')
    .on('connection_deliveries')
    .columns(['shop_id', 'resource_id'])
    .where(sql<boolean>`status = 'deferred'`)
    .execute();
  // The body as received, kept apart from the row its outcome updates (SQLite rewrites a row
  // whole, and a body is up to 2 MB), until pruned (CONNECTION_RETENTION_DAYS) or erased.
  await db.schema
    .createTable('connection_delivery_bodies')
    .addColumn('shop_id', 'bigint', (c) => c.notNull())
    .addColumn('delivery_id', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('connection_delivery_bodies_pkey', ['shop_id', 'delivery_id'])
    .addForeignKeyConstraint('connection_delivery_bodies_delivery', ['shop_id', 'delivery_id'], 'connection_deliveries', ['shop_id', 'id'], (fk) =>
      fk.onDelete('cascade'),
    )
    .execute();
  // The prune, across shops, oldest first.
  await db.schema.createIndex('connection_delivery_bodies_received').on('connection_delivery_bodies').column('received_at').execute();
  await db.schema.createIndex('connection_deliveries_customer').on('connection_deliveries').columns(['shop_id', 'customer_remote_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('connection_sources').execute();
  await db.schema.dropTable('connection_refunds').execute();
  await db.schema.dropTable('connection_delivery_bodies').execute();
  await db.schema.dropTable('connection_deliveries').execute();
  await sql`delete from shop_counts where table_name = 'connections'`.execute(db);
  await db.schema.dropTable('connections').execute();
}
