import type { Kysely } from 'kysely';
import { shopTable } from './_schema.js';

// Customers erased by DELETE /customers/{remote_id} (customers/redact.ts): the remote_id and
// when, so that a repeated DELETE answers as the first did. Nothing else about the person.

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'customer_redactions', ['remote_id'], (t) =>
    t.addColumn('remote_id', 'bigint', (c) => c.notNull()).addColumn('redacted_at', 'bigint', (c) => c.notNull()),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('customer_redactions').execute();
}
