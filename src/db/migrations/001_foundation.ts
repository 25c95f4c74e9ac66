import { sql, type Kysely } from 'kysely';
import { idColumn, isPostgres, shopTable } from './_schema.js';

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);

  await db.schema
    .createTable('shops')
    // SQLite: only INTEGER PRIMARY KEY is the auto-assigned rowid.
    .addColumn('id', pg ? 'bigint' : 'integer', (c) => (pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey()))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('per_event_expiry', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('points_expiry_days', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await shopTable(db, 'api_tokens', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('token_hint', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint'),
  ).execute();
  await db.schema.createIndex('api_tokens_token_hash').unique().on('api_tokens').column('token_hash').execute();

  await shopTable(db, 'idempotency_keys', ['key'], (t) =>
    t
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer', (c) => c.notNull())
      .addColumn('response_body', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute();

  // SQLite has no sequences; ids of WITHOUT ROWID tables are handed out from this table.
  await db.schema
    .createTable('id_sequences')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('next_id', 'bigint', (c) => c.notNull().defaultTo(1))
    .execute();

  await shopTable(db, 'customers', ['remote_id'], (t) =>
    t
      .addColumn('remote_id', 'bigint', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('first_name', 'text')
      .addColumn('last_name', 'text')
      .addColumn('phone', 'text')
      .addColumn('birthday', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema
    .createIndex('customers_email')
    .unique()
    .on('customers')
    .columns(['shop_id'])
    .expression(sql`lower(email)`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['customers', 'id_sequences', 'idempotency_keys', 'api_tokens', 'shops']) {
    await db.schema.dropTable(table).execute();
  }
}
