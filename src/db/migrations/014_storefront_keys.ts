import type { Kysely } from 'kysely';
import { idColumn, shopTable } from './_schema.js';

// Storefront keys (docs/storefront.md): a publishable key that names the key in customer
// tokens (`kid`) and in X-Publishable-Key, the secret that signs those tokens (kept in clear:
// the server verifies HMAC signatures with it, as it signs webhooks with theirs), and the
// browser origins allowed to call the storefront API with it. Each allowed origin is also a row
// of its own, so that a CORS preflight, which carries no key, is answered from an index.
// `demo` marks the shop `npm start` created on an empty database (GET /storefront/demo).

export async function up(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'storefront_keys', ['id'], (t) =>
    t
      .addColumn('id', 'bigint', idColumn(db))
      .addColumn('publishable_key', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('allowed_origins', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('storefront_keys_publishable').unique().on('storefront_keys').column('publishable_key').execute();

  await shopTable(db, 'storefront_key_origins', ['key_id', 'origin'], (t) =>
    t.addColumn('key_id', 'bigint', (c) => c.notNull()).addColumn('origin', 'text', (c) => c.notNull()),
  ).execute();
  await db.schema.createIndex('storefront_key_origins_origin').on('storefront_key_origins').column('origin').execute();

  await db.schema
    .alterTable('shops')
    .addColumn('demo', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('shops').dropColumn('demo').execute();
  await db.schema.dropTable('storefront_key_origins').execute();
  await db.schema.dropTable('storefront_keys').execute();
}
