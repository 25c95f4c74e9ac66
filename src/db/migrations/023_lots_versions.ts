import type { Kysely } from 'kysely';

// A customer's lots version (docs/storefront.md, "GET /me"): a value the ledger's writer and the
// expiry sweep set anew, drawn at random (ledger/lots-version.ts), in the statement that stores
// the balances of every customer whose lots they change. A process may keep what it read off a
// customer's lots (the storefront's upcoming expiries) beside the version it read them at, and
// use it while the row still shows that version. Random rather than counted: a customer erased
// and created again under the same remote_id, or a shop id used again, starts no count that could
// meet a kept one. 0 (every row before this migration, and a customer never posted to) is never
// kept.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('customers')
    .addColumn('lots_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('customers').dropColumn('lots_version').execute();
}
