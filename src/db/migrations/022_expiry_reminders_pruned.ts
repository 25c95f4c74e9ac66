import type { Kysely } from 'kysely';

// Expiry reminders sent are pruned once the expiry they remind of has passed (docs/ledger.md,
// "Expiry reminders"): the job finds them in the order of that instant, a bounded batch at a
// time, through this index instead of a scan of every shop's reminders.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('expiry_reminders_expires').on('expiry_reminders').columns(['expires_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('expiry_reminders_expires').execute();
}
