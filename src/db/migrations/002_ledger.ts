import { sql, type Kysely } from 'kysely';
import { idColumn, shopTable } from './_schema.js';

export async function up(db: Kysely<any>): Promise<void> {
  // The append-only ledger. Balances after the event are recorded with it: they are history.
  await shopTable(db, 'points_events', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('points_amount', 'integer', (c) => c.notNull())
      .addColumn('credits_amount', 'bigint', (c) => c.notNull())
      .addColumn('internal_note', 'text')
      .addColumn('external_note', 'text')
      .addColumn('custom_action_name', 'text')
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('points_balance', 'bigint', (c) => c.notNull())
      .addColumn('credits_balance', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('points_events_customer').on('points_events').columns(['shop_id', 'customer_remote_id', 'id']).execute();
  // Sorting and filtering the ledger by applied_at (ties broken by id, as pagination does).
  await db.schema.createIndex('points_events_applied_at').on('points_events').columns(['shop_id', 'applied_at', 'id']).execute();

  // What each grant left to spend. kind: 'points' | 'credits'. remaining reaches 0 when spent
  // or when the expiry sweep records its expiration.
  await shopTable(db, 'points_lots', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('event_id', 'bigint', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('remaining', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
  // Covers the balance query (remaining included), so balances never read the table itself.
  await db.schema
    .createIndex('points_lots_open')
    .on('points_lots')
    .columns(['shop_id', 'customer_remote_id', 'kind', 'expires_at', 'remaining'])
    .where(sql.ref('remaining'), '>', 0)
    .execute();
  await db.schema
    .createIndex('points_lots_expiring')
    .on('points_lots')
    .columns(['expires_at'])
    .where(sql<boolean>`remaining > 0 and expires_at is not null`)
    .execute();

  // Which lots a deduction or expiration consumed, and how much of each.
  await shopTable(db, 'lot_consumptions', ['event_id', 'lot_id'], (t) =>
    t
      .addColumn('event_id', 'bigint', (c) => c.notNull())
      .addColumn('lot_id', 'bigint', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull()),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['lot_consumptions', 'points_lots', 'points_events']) await db.schema.dropTable(table).execute();
}
