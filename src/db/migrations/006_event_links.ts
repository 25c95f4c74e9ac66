import { sql, type Kysely } from 'kysely';

// Events that other events or records caused link to them: a reversal to the event it undoes
// (at most one reversal per event, which a unique index holds under racing requests), and
// the event of a reward redemption to its redemption.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('points_events').addColumn('reverses_event_id', 'bigint').execute();
  await db.schema.alterTable('points_events').addColumn('redemption_id', 'bigint').execute();
  await db.schema
    .createIndex('points_events_reverses')
    .on('points_events')
    .columns(['shop_id', 'reverses_event_id'])
    .unique()
    .where(sql.ref('reverses_event_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('points_events_reverses').execute();
  await db.schema.alterTable('points_events').dropColumn('redemption_id').execute();
  await db.schema.alterTable('points_events').dropColumn('reverses_event_id').execute();
}
