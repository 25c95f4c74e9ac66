import { sql, type CreateTableBuilder, type Kysely } from 'kysely';

// Helpers shared by migrations. Migrations are frozen in time: these helpers may gain new
// functions but an existing one never changes behaviour.

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter.constructor.name === 'PostgresAdapter';
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
  let table = db.schema
    .createTable(name)
    .addColumn('shop_id', 'bigint', (c) => c.notNull());
  table = build(table).addPrimaryKeyConstraint(`${name}_pkey`, ['shop_id', ...primaryKey] as any);
  if (!isPostgres(db)) table = table.modifyEnd(sql`without rowid`);
  return table;
}

/** A bigint id column that PostgreSQL fills from a sequence when the caller does not. */
export function idColumn(db: Kysely<any>) {
  return (c: any) => (isPostgres(db) ? c.notNull().generatedByDefaultAsIdentity() : c.notNull());
}
