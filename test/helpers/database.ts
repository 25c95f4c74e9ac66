import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { isPostgres, writerOf } from '../../src/db/dialect.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { DB } from '../../src/db/tables.js';

// Each test file gets a database of its own: a fresh SQLite file, or, when TEST_DATABASE_URL
// names a PostgreSQL server, a fresh database created on it and dropped afterwards.

export const TEST_DIALECT = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `loyalty_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const base = process.env.TEST_DATABASE_URL;
  if (base) {
    await admin((c) => c.query(`create database ${name}`));
    const url = new URL(base);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-test-'));
  return {
    url: `sqlite:${path.join(dir, `${name}.db`)}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * How many rows of one shop every table holds, for every table the database catalogue lists
 * with a shop_id column (so a table added later is counted without being named), and `shops`
 * for the shop's own row.
 */
export async function rowsOfShop(db: DB, shopId: number): Promise<Record<string, number>> {
  const catalogue = isPostgres(db)
    ? sql<{ name: string }>`select table_name as name from information_schema.columns where table_schema = current_schema() and column_name = 'shop_id'`
    : sql<{ name: string }>`select m.name from sqlite_master m join pragma_table_info(m.name) c where m.type = 'table' and c.name = 'shop_id'`;
  const tables = (await catalogue.execute(db)).rows.map((r) => r.name).sort();
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where shop_id = ${shopId}`.execute(db);
    counts[table] = Number(rows[0]!.n);
  }
  const { rows } = await sql<{ n: number }>`select count(*) as n from shops where id = ${shopId}`.execute(db);
  counts.shops = Number(rows[0]!.n);
  return counts;
}

/**
 * Migrates a database to the migration just before `name` (up from an empty one, or down through
 * `name` and every later one), as a version before `name` left it.
 */
export async function migrateBefore(db: Kysely<any>, name: string): Promise<void> {
  const names = Object.keys(migrations);
  if (names.indexOf(name) < 1) throw new Error(`no migration before ${name}`);
  const migrator = new Migrator({
    db: writerOf(db),
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  });
  const { error } = await migrator.migrateTo(names[names.indexOf(name) - 1]!);
  if (error) throw error;
}
