import { sql, type Kysely } from 'kysely';
import { shopTable } from './_schema.js';

// Expiry modes and reminders (docs/ledger.md, "Expiry modes"). A shop's points expire lot by
// lot (per_lot) or, in inactivity mode, all at once after points_inactivity_days without
// activity. Each customer's last activity is stored by the ledger's writer; the index on it
// is the order in which balances fall due (the shop's period is the same for every customer),
// so the job and the reminders find due customers without a scan. A customer whose balance
// was written off for inactivity has no activity time until the next posting: they leave the
// index. Reminders find a customer's next expiry through customers_next_expiry, and each
// reminder sent is a row of expiry_reminders, whose key makes it once only; the job's place in
// each reminder's order is kept per shop in expiry_reminder_cursors.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('shops')
    .addColumn('points_expiry_mode', 'text', (c) => c.notNull().defaultTo('per_lot'))
    .execute();
  await db.schema.alterTable('shops').addColumn('points_inactivity_days', 'integer').execute();
  // When inactivity expiry was switched on (or its period changed): nothing falls due before a full period after it.
  await db.schema.alterTable('shops').addColumn('points_inactivity_since', 'bigint').execute();
  // A JSON array of up to 3 numbers of days.
  await db.schema
    .alterTable('shops')
    .addColumn('expiry_reminder_days', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await db.schema.alterTable('customers').addColumn('points_active_at', 'bigint').execute();
  // Customers holding something count as active when they were last written: never earlier than their last posting.
  await sql`update customers set points_active_at = updated_at where points_balance > 0 or credits_balance > 0`.execute(db);
  await db.schema
    .createIndex('customers_points_active')
    .on('customers')
    .columns(['shop_id', 'points_active_at', 'remote_id'])
    .where(sql<boolean>`points_active_at is not null`)
    .execute();
  await db.schema
    .createIndex('customers_next_expiry')
    .on('customers')
    .columns(['shop_id', 'next_expiry_at', 'remote_id'])
    .where(sql<boolean>`next_expiry_at is not null`)
    .execute();
  await shopTable(db, 'expiry_reminders', ['customer_remote_id', 'expires_at', 'days_before'], (t) =>
    t
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('days_before', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await shopTable(db, 'expiry_reminder_cursors', ['days_before'], (t) =>
    t
      .addColumn('days_before', 'integer', (c) => c.notNull())
      // What the cursor's order is of: the mode and its period ("per_lot", "inactivity:<days>:<since>").
      .addColumn('basis', 'text', (c) => c.notNull())
      .addColumn('after_at', 'bigint', (c) => c.notNull())
      .addColumn('after_id', 'bigint', (c) => c.notNull()),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('expiry_reminder_cursors').execute();
  await db.schema.dropTable('expiry_reminders').execute();
  await db.schema.dropIndex('customers_next_expiry').execute();
  await db.schema.dropIndex('customers_points_active').execute();
  await db.schema.alterTable('customers').dropColumn('points_active_at').execute();
  for (const column of ['expiry_reminder_days', 'points_inactivity_since', 'points_inactivity_days', 'points_expiry_mode'])
    await db.schema.alterTable('shops').dropColumn(column).execute();
}
