import { sql, type Kysely } from 'kysely';
import { idColumn, isPostgres, shopTable } from './_schema.js';

// Distribution by shop (DESIGN 18). Every table holding a shop's data has shop_id in its primary
// key and in every unique key, and every foreign key between such tables includes it, so that on
// Citus each such table is distributed by shop_id and a shop's rows live together. The reference
// tables, shared by every shop, are: shops; the migrations' bookkeeping (schema_migrations,
// schema_migrations_lock) and id_sequences (SQLite's id counters, unused on PostgreSQL); and the
// lookups made before the shop is known: api_tokens (by token_hash) and storefront_keys (by
// publishable_key). test/db/distribution.test.ts reads the catalogue and holds every table to it.
//
// audit_events was keyed by its id alone (one identity sequence for every shop, so that an entry
// locks nothing of the shop's); its key becomes (shop_id, id), ids still from that sequence, and
// the (shop_id, id) index beside it goes, since the key now is that index. On SQLite the id stays
// the table's rowid (an autoincrement needs `integer primary key`): one file is one machine, with
// nothing to distribute, and an entry keeps costing no lookup of its shop's last id.
//
// stream_events is the event stream's outbox (events/stream.ts): with EVENT_STREAM_URL set, every
// event the outbox records, one row each, claimed by a relay (claimed_by until claimed_until) and
// marked published_at once the stream acknowledged it; published rows are pruned after a day.

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await sql`alter table audit_events drop constraint audit_events_pkey, add constraint audit_events_pkey primary key (shop_id, id)`.execute(db);
    await db.schema.dropIndex('audit_events_shop').execute();
  }
  await shopTable(db, 'stream_events', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('topic', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('claimed_by', 'text')
      .addColumn('claimed_until', 'bigint')
      .addColumn('published_at', 'bigint'),
  ).execute();
  // The backlog, in order per shop; the published rows, oldest first, for pruning and status.
  await sql`create index stream_events_pending on stream_events (shop_id, id) where published_at is null`.execute(db);
  await sql`create index stream_events_published on stream_events (published_at) where published_at is not null`.execute(db);
  // The live claims of relays (a handful of batches), found without reading the backlog.
  await sql`create index stream_events_claims on stream_events (claimed_until) where published_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stream_events').execute();
  if (isPostgres(db)) {
    await db.schema.createIndex('audit_events_shop').on('audit_events').columns(['shop_id', 'id']).execute();
    await sql`alter table audit_events drop constraint audit_events_pkey, add constraint audit_events_pkey primary key (id)`.execute(db);
  }
}
