import { type Kysely } from 'kysely';
import { isPostgres } from './_schema.js';

// Access and audit (docs/access.md). API tokens carry scopes (space-separated; every
// token made before this migration could do everything, so it keeps `admin`) and may expire
// (`expires_at`, null: never; the console's links are short-lived). The audit log records every
// write of the merchant API, the CLI and the console: who, what, which record, the fields that
// changed, and the request; written in the transaction of the write. Its ids come from one
// sequence for all shops (an autoincrement / identity), so that writing an entry locks nothing
// of the shop's: the writes it records already hold what they need.

export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .alterTable('api_tokens')
    .addColumn('scopes', 'text', (c) => c.notNull().defaultTo('admin'))
    .execute();
  await db.schema.alterTable('api_tokens').addColumn('expires_at', 'bigint').execute();

  await db.schema
    .createTable('audit_events')
    .addColumn('id', pg ? 'bigint' : 'integer', (c) => (pg ? c.primaryKey().generatedByDefaultAsIdentity() : c.primaryKey().autoIncrement()))
    .addColumn('shop_id', 'bigint', (c) => c.notNull())
    .addColumn('occurred_at', 'bigint', (c) => c.notNull())
    // `token`, `cli` or `system`; a token's id and name as they were.
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_token_id', 'bigint')
    .addColumn('actor_name', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text')
    // JSON: {field: [before, after]}.
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .execute();
  await db.schema.createIndex('audit_events_shop').on('audit_events').columns(['shop_id', 'id']).execute();
  await db.schema.createIndex('audit_events_resource').on('audit_events').columns(['shop_id', 'resource', 'resource_id', 'id']).execute();
  await db.schema.createIndex('audit_events_actor').on('audit_events').columns(['shop_id', 'actor_token_id', 'id']).execute();
  // Retention deletes the oldest entries of every shop (jobs.ts).
  await db.schema.createIndex('audit_events_occurred_at').on('audit_events').column('occurred_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
  await db.schema.alterTable('api_tokens').dropColumn('expires_at').execute();
  await db.schema.alterTable('api_tokens').dropColumn('scopes').execute();
}
