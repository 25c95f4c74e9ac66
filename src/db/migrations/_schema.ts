import { sql, type CreateTableBuilder, type Kysely } from 'kysely';

// Helpers shared by migrations. Migrations are frozen in time: these helpers may gain new
// functions but an existing one never changes behaviour.

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter.constructor.name === 'PostgresAdapter';
}

/** Whether a table exists (in the connection's schema on PostgreSQL). */
export async function tableExists(db: Kysely<any>, name: string): Promise<boolean> {
  const { rows } = isPostgres(db)
    ? await sql`select 1 from information_schema.tables where table_schema = current_schema() and table_name = ${name}`.execute(db)
    : await sql`select 1 from sqlite_master where type = 'table' and name = ${name}`.execute(db);
  return rows.length > 0;
}

/**
 * A table whose rows belong to a shop and are clustered by (shop_id, key...). On SQLite it is
 * a WITHOUT ROWID table, so a page of one shop's rows is one contiguous B-tree range.
 */
export function shopTable<T extends string>(
  db: Kysely<any>,
  name: T,
  primaryKey: string[],
  build: (t: CreateTableBuilder<T, any>) => CreateTableBuilder<T, any>,
) {
  let table = db.schema.createTable(name).addColumn('shop_id', 'bigint', (c) => c.notNull());
  table = build(table).addPrimaryKeyConstraint(`${name}_pkey`, ['shop_id', ...primaryKey] as any);
  if (!isPostgres(db)) table = table.modifyEnd(sql`without rowid`);
  return table;
}

/** A bigint id column that PostgreSQL fills from a sequence when the caller does not. */
export function idColumn(db: Kysely<any>) {
  return (c: any) => (isPostgres(db) ? c.notNull().generatedByDefaultAsIdentity() : c.notNull());
}

/**
 * Keeps shop_counts (shop_id, table_name) → n equal to the shop's rows in `table`, through
 * triggers on insert and delete, and computes it once for the rows already there. PostgreSQL:
 * one statement-level trigger call per statement; SQLite: row triggers.
 */
export async function countRowsPerShop(db: Kysely<any>, table: string): Promise<void> {
  const name = sql.lit(table);
  if (isPostgres(db)) {
    await sql`create trigger ${sql.raw(`${table}_count_insert`)} after insert on ${sql.table(table)}
      referencing new table as changed for each statement execute function shop_counts_insert()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_count_delete`)} after delete on ${sql.table(table)}
      referencing old table as changed for each statement execute function shop_counts_delete()`.execute(db);
  } else {
    await sql`create trigger ${sql.raw(`${table}_count_insert`)} after insert on ${sql.table(table)} begin
      insert into shop_counts (shop_id, table_name, n) values (new.shop_id, ${name}, 1)
        on conflict (shop_id, table_name) do update set n = n + 1;
      end`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_count_delete`)} after delete on ${sql.table(table)} begin
      update shop_counts set n = n - 1 where shop_id = old.shop_id and table_name = ${name};
      end`.execute(db);
  }
  await sql`insert into shop_counts (shop_id, table_name, n) select shop_id, ${name}, count(*) from ${sql.table(table)} group by shop_id`.execute(db);
}
