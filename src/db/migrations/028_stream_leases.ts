import { sql, type Kysely } from 'kysely';
import { shopTable } from './_schema.js';

// The event stream's relays lease shops, not events (events/stream.ts). A relay held its claim
// on each event it published: one UPDATE of every claimed row, found through an (shop_id, id)
// tuple list that PostgreSQL answered with a scan of the whole table (a day of published events
// is kept), then a second write of every row to mark it published. A lease on the shop, one row
// in stream_leases, says the same thing: no other relay publishes the shop's events until
// claimed_until. The events are then read, not written, when claimed, and written once, by
// range, when the stream has acknowledged them. The columns of the per-event claim, and the
// index of live claims that every insert kept, go.

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'stream_leases', [], (t) =>
    t.addColumn('claimed_by', 'text', (c) => c.notNull()).addColumn('claimed_until', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.dropIndex('stream_events_claims').execute();
  await db.schema.alterTable('stream_events').dropColumn('claimed_by').execute();
  await db.schema.alterTable('stream_events').dropColumn('claimed_until').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('stream_events').addColumn('claimed_by', 'text').execute();
  await db.schema.alterTable('stream_events').addColumn('claimed_until', 'bigint').execute();
  await sql`create index stream_events_claims on stream_events (claimed_until) where published_at is null`.execute(db);
  await db.schema.dropTable('stream_leases').execute();
}
