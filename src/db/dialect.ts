import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { isPostgres } from './migrations/_schema.js';
import type { DB, Tables } from './tables.js';

// Everything that is written differently for SQLite and PostgreSQL above the driver.

// One test of the dialect, for the app and for migrations (which import nothing of the app's).
export { isPostgres };

const RETRYABLE_PG_CODES = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

/**
 * Runs fn in a write transaction. SQLite transactions are serialised by the single
 * connection and begin IMMEDIATE; PostgreSQL ones are retried on serialization failure or
 * deadlock, which should be rare since writers lock rows in a fixed order.
 */
export async function transaction<T>(db: DB, fn: (trx: DB) => Promise<T>): Promise<T> {
  // On PostgreSQL, write transactions take connections of their own, fewer than the pool's,
  // so that a flood of long batches cannot starve quick pages (db/connect.ts).
  const writer = writeDatabases.get(db) ?? db;
  for (let attempt = 1; ; attempt++) {
    try {
      return await writer.transaction().execute(fn);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= MAX_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_PG_CODES.has(code)) throw error;
    }
  }
}

/** The database that write transactions use, for each one that has its own (connect.ts sets it). */
const writeDatabases = new WeakMap<DB, DB>();

export function setWriteDatabase(db: DB, writer: DB): void {
  writeDatabases.set(db, writer);
}

/** A signed 64-bit key for PostgreSQL advisory locks. */
function lockKey(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigInt64BE(0);
}

/**
 * Tries to take a named lock until the transaction ends, without waiting. On PostgreSQL it is
 * an advisory lock shared by every process on the database. SQLite is written by one process
 * whose transactions are already serialised, so there it always succeeds.
 */
export async function tryTransactionLock(trx: DB, name: string): Promise<boolean> {
  if (!isPostgres(trx)) return true;
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(${lockKey(name).toString()}::bigint) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

/**
 * Takes a named lock until the transaction ends, waiting for it. On PostgreSQL an advisory
 * lock; SQLite write transactions are already serialised.
 */
export async function transactionLock(trx: DB, name: string): Promise<void> {
  if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(${lockKey(name).toString()}::bigint)`.execute(trx);
}

/**
 * Hands out `count` new ids for a table, ascending. On PostgreSQL they come from the table's
 * identity sequence under a per-shop transaction lock, so within a shop ids become visible in
 * the order they were handed out and a since_id cursor never skips a row that commits late.
 * SQLite writes are already serialised.
 */
export async function allocateIds(trx: DB, shopId: number, table: string, count: number): Promise<number[]> {
  if (count <= 0) return [];
  if (isPostgres(trx)) {
    await transactionLock(trx, `ids:${shopId}:${table}`);
    // The sequence is looked up once (offset 0 keeps the planner from inlining it per row).
    const { rows } = await sql<{ id: number }>`select nextval(s.seq) as id from (select pg_get_serial_sequence(${table}, 'id')::regclass as seq offset 0) s, generate_series(1, ${count})`.execute(trx);
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  }
  const row = await trx
    .insertInto('id_sequences')
    .values({ name: table, next_id: count + 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet({ next_id: sql`id_sequences.next_id + ${count}` }))
    .returning('next_id')
    .executeTakeFirstOrThrow();
  const first = Number(row.next_id) - count;
  return Array.from({ length: count }, (_, i) => first + i);
}

/** True when a write failed on a unique index, on either database. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

const MAX_SQLITE_PARAMETERS = 30_000;

/** What an insert does with a row whose key exists: an upsert. */
export interface OnConflict {
  /** The columns of the unique key. */
  key: readonly string[];
  /** The columns set from the new row; the others keep what is stored. */
  update: readonly string[];
  /** The columns the new row's value is added to (counters). */
  add?: readonly string[];
}

/**
 * Inserts many rows (all with the same keys, in the same order): the ledger's and the import's
 * hot path; with `onConflict`, an upsert (no key may then appear twice among the rows).
 * PostgreSQL: one JSON parameter expanded by json_populate_recordset, which the server parses
 * far faster than thousands of bound values. SQLite: multi-row VALUES under its 32766 bound
 * parameters, as plain text (a Kysely query tree per value costs more than the insert).
 */
export async function insertRows<T extends keyof Tables>(trx: DB, table: T, rows: readonly Tables[T][], onConflict?: OnConflict): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const quote = (column: string) => `"${column}"`;
  const upsert = onConflict
    ? ` on conflict (${onConflict.key.map(quote).join(', ')}) do update set ${[
        ...onConflict.update.map((c) => `${quote(c)} = excluded.${quote(c)}`),
        ...(onConflict.add ?? []).map((c) => `${quote(c)} = ${quote(table)}.${quote(c)} + excluded.${quote(c)}`),
      ].join(', ')}`
    : '';
  if (isPostgres(trx)) {
    const refs = sql.join(columns.map((c) => sql.ref(c)));
    for (let i = 0; i < rows.length; i += 5000) {
      const json = JSON.stringify(rows.slice(i, i + 5000));
      await sql`insert into ${sql.table(table)} (${refs}) select ${refs} from json_populate_recordset(null::${sql.table(table)}, ${json}::json)${sql.raw(upsert)}`.execute(trx);
    }
    return;
  }
  const size = Math.floor(MAX_SQLITE_PARAMETERS / columns.length);
  for (let start = 0; start < rows.length; start += size) {
    const end = Math.min(rows.length, start + size);
    const row = `(${columns.map(() => '?').join(', ')})`;
    const text = `insert into "${table}" (${columns.map(quote).join(', ')}) values ${Array.from({ length: end - start }, () => row).join(', ')}${upsert}`;
    const params: unknown[] = [];
    for (let i = start; i < end; i++) {
      const values = rows[i] as unknown as Record<string, unknown>;
      for (const column of columns) params.push(values[column]);
    }
    await trx.executeQuery(CompiledQuery.raw(text, params));
  }
}

/**
 * Locks the rows a claim selects until its transaction ends, skipping rows that another
 * transaction holds, so that workers in several processes claim disjoint rows. PostgreSQL:
 * FOR UPDATE OF `table` SKIP LOCKED. SQLite: write transactions are already serialised.
 */
export function claimRows<QB extends SelectQueryBuilder<any, any, any>>(trx: DB, query: QB, table: string): QB {
  return isPostgres(trx) ? (query.forUpdate(table as never).skipLocked() as QB) : query;
}

/**
 * Locks the rows a query selects until the transaction ends (PostgreSQL: FOR UPDATE). SQLite
 * write transactions are already serialised.
 */
export function lockedRows<QB extends SelectQueryBuilder<any, any, any>>(trx: DB, query: QB): QB {
  return isPostgres(trx) ? (query.forUpdate() as QB) : query;
}

/**
 * Sets columns of many rows found by their key, in one statement per chunk: the ledger's stored
 * balances after a batch. Every row holds the key columns and the same columns to set.
 * PostgreSQL: UPDATE … FROM json_populate_recordset; SQLite: UPDATE … FROM a VALUES list.
 */
export async function updateRows(trx: DB, table: keyof Tables, key: readonly string[], rows: readonly Record<string, unknown>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  const set = columns.filter((c) => !key.includes(c));
  const quote = (column: string) => `"${column}"`;
  const assignments = set.map((c) => `${quote(c)} = v.${quote(c)}`).join(', ');
  const match = key.map((c) => `"${table}".${quote(c)} = v.${quote(c)}`).join(' and ');
  if (isPostgres(trx)) {
    for (let i = 0; i < rows.length; i += 5000) {
      const json = JSON.stringify(rows.slice(i, i + 5000));
      await sql`update ${sql.table(table)} set ${sql.raw(assignments)} from json_populate_recordset(null::${sql.table(table)}, ${json}::json) v where ${sql.raw(match)}`.execute(trx);
    }
    return;
  }
  const size = Math.floor(MAX_SQLITE_PARAMETERS / columns.length);
  for (let start = 0; start < rows.length; start += size) {
    const end = Math.min(rows.length, start + size);
    const row = `(${columns.map(() => '?').join(', ')})`;
    const text = `with v(${columns.map(quote).join(', ')}) as (values ${Array.from({ length: end - start }, () => row).join(', ')}) update "${table}" set ${assignments} from v where ${match}`;
    const params: unknown[] = [];
    for (let i = start; i < end; i++) {
      const values = rows[i]!;
      for (const column of columns) params.push(values[column]);
    }
    await trx.executeQuery(CompiledQuery.raw(text, params));
  }
}

/** A column of the keys given to `perKey`, with its PostgreSQL type. */
export interface KeyColumn {
  name: string;
  type: 'bigint' | 'text';
}

/**
 * Runs a small query once per key and returns every row with its key's values: the first
 * lots of each customer, in index order. `build` makes the query from references to the key's
 * columns. PostgreSQL: one statement, the keys unnested and the query joined LATERAL. SQLite:
 * one statement per key, with the values inlined as parameters (in-process, its prepared
 * statement cached: a few µs each).
 */
export async function perKey<K extends Record<string, number | string>, R>(
  trx: DB,
  columns: readonly KeyColumn[],
  keys: readonly K[],
  build: (ref: (column: keyof K & string) => RawBuilder<unknown>) => RawBuilder<R>,
): Promise<(R & K)[]> {
  if (keys.length === 0) return [];
  if (isPostgres(trx)) {
    const arrays = columns.map((c) => sql`${keys.map((k) => k[c.name])}::${sql.raw(c.type)}[]`);
    const names = sql.raw(columns.map((c) => `"${c.name}"`).join(', '));
    const inner = build((column) => sql.ref(`k.${column}`));
    const { rows } = await sql<R & K>`select k.*, q.* from unnest(${sql.join(arrays)}) as k(${names}) cross join lateral (${inner}) as q`.execute(trx);
    return rows;
  }
  // Built and compiled once per call with a stand-in per key column; each key then only runs.
  const slots = new Map(columns.map((c) => [c.name, { slot: c.name }]));
  const compiled = build((column) => sql.val(slots.get(column)!)).compile(trx);
  const positions = compiled.parameters.map((p) => (typeof p === 'object' && p !== null && 'slot' in p ? (p as { slot: string }).slot : null));
  const out: (R & K)[] = [];
  for (const key of keys) {
    const parameters = compiled.parameters.map((p, i) => (positions[i] === null ? p : key[positions[i]!]));
    const { rows } = await trx.executeQuery<R>({ ...compiled, parameters });
    for (const row of rows) out.push({ ...row, ...key });
  }
  return out;
}

/**
 * Refreshes the query planner's statistics where they went stale (SQLite's PRAGMA optimize:
 * tables that grew or shrank much since last analysed); PostgreSQL's autovacuum does it there.
 */
export async function optimizeDatabase(db: DB): Promise<void> {
  if (!isPostgres(db)) await sql`pragma optimize`.execute(db);
}
