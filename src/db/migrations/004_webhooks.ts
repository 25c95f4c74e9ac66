import { sql, type Kysely } from 'kysely';
import { idColumn, shopTable } from './_schema.js';

// The webhook outbox. A delivery row is written in the same transaction as the change it
// announces, with its payload frozen, and a background job sends it (webhooks/delivery.ts).
// Deliveries and their attempts go with their webhook (ON DELETE CASCADE): deleting a
// webhook stops what it still had to send.

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'webhook_deliveries', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('webhook_id', 'bigint', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('topic', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint')
      .addColumn('last_attempt_at', 'bigint')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addForeignKeyConstraint('webhook_deliveries_webhook', ['shop_id', 'webhook_id'], 'webhooks', ['shop_id', 'id'], (fk) => fk.onDelete('cascade')),
  ).execute();
  // A webhook's deliveries, by id (the list endpoint, and the cascade from webhooks).
  await db.schema.createIndex('webhook_deliveries_webhook').on('webhook_deliveries').columns(['shop_id', 'webhook_id', 'id']).execute();
  // The delivery job's claim (due pending rows, across shops) and the retention prune. Queries
  // compare status with a literal so that SQLite sees they fit the partial index.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['next_attempt_at', 'shop_id', 'id'])
    .where(sql<boolean>`status = 'pending'`)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_settled')
    .on('webhook_deliveries')
    .columns(['updated_at'])
    .where(sql<boolean>`status <> 'pending'`)
    .execute();

  await shopTable(db, 'webhook_attempts', ['delivery_id', 'attempt'], (t) =>
    t
      .addColumn('delivery_id', 'bigint', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('attempted_at', 'bigint', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addForeignKeyConstraint('webhook_attempts_delivery', ['shop_id', 'delivery_id'], 'webhook_deliveries', ['shop_id', 'id'], (fk) =>
        fk.onDelete('cascade'),
      ),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
}
