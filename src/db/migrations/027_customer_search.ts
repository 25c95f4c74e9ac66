import { sql, type Kysely } from 'kysely';

// Customer search (GET /customers?query=, customers/search.ts): a word starts a first or last
// name, an e-mail (the unique index on (shop_id, lower(email)) of 001 serves it) or a remote_id
// (the primary key). One index per name column, on what the search compares: its lower case.

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['first_name', 'last_name']) {
    await db.schema
      .createIndex(`customers_${column}_search`)
      .on('customers')
      .columns(['shop_id'])
      .expression(sql`lower(${sql.ref(column)})`)
      .execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of ['first_name', 'last_name']) await db.schema.dropIndex(`customers_${column}_search`).execute();
}
