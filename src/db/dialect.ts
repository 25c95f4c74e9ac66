import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { isPostgres } from './migrations/_schema.js';
import { readNow } from './sqlite-driver.js';
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
  const writer = writerOf(db);
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
const writeDatabases = new WeakMap<Kysely<any>, Kysely<any>>();

export function setWriteDatabase(db: DB, writer: DB): void {
  writeDatabases.set(db, writer);
}

/** The database that writes for `db`: its write connections, or `db` itself. */
export function writerOf<D extends Kysely<any>>(db: D): D {
  return (writeDatabases.get(db) as D | undefined) ?? db;
}

/** A signed 64-bit key for PostgreSQL advisory locks. */
function lockKey(name: string): bigint {
  return createHash('sha256').update(name).digest().readBigInt64BE(0);
}

/**
 * Tries to take a named lock until the transaction ends, without waiting. On PostgreSQL it is
 * an advisory lock shared by every process on the database. SQLite write transactions are
 * already serialised (BEGIN IMMEDIATE: one at a time, across the processes of
 * `serve --workers` too), so there it always succeeds.
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
 * Takes the shop's lock on a table's ids (the one allocateIdsOf takes), waiting for it, held to
 * commit: the shop's writers of that table wait until then.
 */
export async function lockIds(trx: DB, shopId: number, table: string): Promise<void> {
  await transactionLock(trx, `ids:${shopId}:${table}`);
}

/** Hands out `count` new ids for a table, ascending (allocateIdsOf). */
export async function allocateIds(trx: DB, shopId: number, table: string, count: number): Promise<number[]> {
  return (await allocateIdsOf(trx, shopId, [[table, count]]))[0]!;
}

/**
 * Hands out new ids for each table and count, ascending per table. On PostgreSQL they come
 * from the tables' identity sequences under a per-shop lock on each table's ids (taken in the
 * order given, held to commit), so within a shop ids become visible in the order they were
 * handed out and a since_id cursor never skips a row that commits late. One statement takes
 * the locks and then the ids: a writer holds the locks for as few round trips as it can.
 * SQLite writes are already serialised.
 */
export async function allocateIdsOf(trx: DB, shopId: number, wanted: readonly (readonly [table: string, count: number])[]): Promise<number[][]> {
  const asked = wanted.filter(([, count]) => count > 0);
  const out = new Map<string, number[]>(asked.map(([table]) => [table, []]));
  if (asked.length > 0 && isPostgres(trx)) {
    const keys = asked.map(([table]) => lockKey(`ids:${shopId}:${table}`).toString());
    // The locks' count is an aggregate: it is whole, every lock taken, before a row of ids is
    // made. Each sequence is looked up once (materialized), not per row.
    const { rows } = await sql<{ name: string; id: number }>`
      with locks as materialized (select pg_advisory_xact_lock(k) from unnest(${keys}::bigint[]) as k),
        wanted as materialized (select name, n, pg_get_serial_sequence(name, 'id')::regclass as seq from unnest(${asked.map(([t]) => t)}::text[], ${asked.map(([, n]) => n)}::int[]) as w(name, n))
      select w.name, nextval(w.seq) as id from (select count(*) from locks) l, wanted w, generate_series(1, w.n)`.execute(trx);
    for (const row of rows) out.get(row.name)!.push(Number(row.id));
    for (const ids of out.values()) ids.sort((a, b) => a - b);
  } else {
    for (const [table, count] of asked) {
      const row = await trx
        .insertInto('id_sequences')
        .values({ name: table, next_id: count + 1 })
        .onConflict((oc) => oc.column('name').doUpdateSet({ next_id: sql`id_sequences.next_id + ${count}` }))
        .returning('next_id')
        .executeTakeFirstOrThrow();
      const first = Number(row.next_id) - count;
      out.set(
        table,
        Array.from({ length: count }, (_, i) => first + i),
      );
    }
  }
  return wanted.map(([table]) => out.get(table) ?? []);
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
  /** A column (updated_at) set from the new row only when one of `update` changes value. */
  touch?: string;
}

/** Rows inserted into one table, all with the same keys in the same order; with `onConflict`, an upsert. */
export type RowInsert = { [T in keyof Tables]: { insert: T; rows: readonly Tables[T][]; onConflict?: OnConflict } }[keyof Tables];

/** Columns set on rows found by their key: every row holds the key columns and the same columns to set. */
export interface RowUpdate {
  update: keyof Tables;
  key: readonly string[];
  rows: readonly Record<string, unknown>[];
}

/**
 * Rows inserted through a SELECT that reads them as a table (an aggregate computed in SQL, such
 * as the ledger's local days, which need the shop's time zone as it is when the statement runs).
 */
export interface RowSelect {
  /** The table written. */
  insertSelect: keyof Tables;
  /** The table whose columns `rows` have. */
  rowsOf: keyof Tables;
  rows: readonly object[];
  /** The columns written, in the order `select` gives them. */
  columns: readonly string[];
  /** The SELECT that gives them, reading the rows from `source` (a FROM item, named `v`). */
  select: (source: string) => string;
  onConflict?: OnConflict;
}

export type RowWrite = RowInsert | RowUpdate | RowSelect;

/** SQL for the local day (days since 1970-01-01) of the epoch milliseconds `ms` in the IANA zone `zone`. */
export function localDaySql(db: DB, ms: string, zone: string): string {
  // SQLite's local_day is the runtime's (db/connect.ts); PostgreSQL has its own zone database.
  return isPostgres(db) ? `(timezone(${zone}, to_timestamp(${ms} / 1000.0))::date - date '1970-01-01')` : `local_day(${ms}, ${zone})`;
}

/** Rows of one PostgreSQL statement, as JSON parameters (parsed far faster than bound values). */
const PG_ROWS_PER_STATEMENT = 5000;

/** Inserts many rows into one table (writeRows); with `onConflict`, an upsert. */
export async function insertRows<T extends keyof Tables>(trx: DB, table: T, rows: readonly Tables[T][], onConflict?: OnConflict): Promise<void> {
  await writeRows(trx, [{ insert: table, rows, onConflict } as RowInsert]);
}

/** Sets columns of many rows found by their key (writeRows): the ledger's stored balances after a batch. */
export async function updateRows(trx: DB, table: keyof Tables, key: readonly string[], rows: readonly Record<string, unknown>[]): Promise<void> {
  await writeRows(trx, [{ update: table, key, rows }]);
}

/**
 * Writes many rows, in order: the ledger's and the import's hot path. No two writes may touch
 * the same row, and an upsert's key may not appear twice among its rows. PostgreSQL: each
 * write's rows as one JSON parameter expanded by json_populate_recordset (parsed far faster
 * than bound values), the writes together in one statement (one round trip, as data-modifying
 * WITH queries) up to PG_ROWS_PER_STATEMENT rows. SQLite: multi-row VALUES under its 32766
 * bound parameters, as plain text (a Kysely query tree per value costs more than the write).
 */
export async function writeRows(trx: DB, writes: readonly RowWrite[]): Promise<void> {
  const postgres = isPostgres(trx);
  const statements: { parts: RawBuilder<unknown>[]; rows: number }[] = [];
  const fold = (part: RawBuilder<unknown>, rows: number) => {
    const last = statements.at(-1);
    if (last !== undefined && last.rows + rows <= PG_ROWS_PER_STATEMENT) {
      last.parts.push(part);
      last.rows += rows;
    } else statements.push({ parts: [part], rows });
  };
  for (const write of writes) {
    if (write.rows.length === 0) continue;
    const columns = Object.keys(write.rows[0]!);
    if ('insertSelect' in write) {
      // Rows read by a SELECT: all in one statement (they are few: an aggregate's deltas).
      if (postgres) fold(postgresSelect(write, JSON.stringify(write.rows)), write.rows.length);
      else {
        // The SELECT adds up each statement's rows: an upsert that adds may take them in parts.
        const size = Math.floor(MAX_SQLITE_PARAMETERS / columns.length);
        for (let i = 0; i < write.rows.length; i += size) await sqliteSelect(write, write.rows.slice(i, i + size), columns).execute(trx);
      }
      continue;
    }
    if (postgres) {
      for (let i = 0; i < write.rows.length; i += PG_ROWS_PER_STATEMENT) {
        const chunk = write.rows.slice(i, i + PG_ROWS_PER_STATEMENT);
        fold(postgresWrite(write, columns, JSON.stringify(chunk)), chunk.length);
      }
      continue;
    }
    const size = Math.floor(MAX_SQLITE_PARAMETERS / columns.length);
    for (let start = 0; start < write.rows.length; start += size) {
      const end = Math.min(write.rows.length, start + size);
      const params: unknown[] = [];
      for (let i = start; i < end; i++) {
        const values = write.rows[i] as Record<string, unknown>;
        for (const column of columns) params.push(values[column]);
      }
      await trx.executeQuery(CompiledQuery.raw(sqliteWrite(write, columns, end - start), params));
    }
  }
  for (const { parts } of statements) {
    if (parts.length === 1) await parts[0]!.execute(trx);
    else await sql`with ${sql.join(parts.map((part, i) => sql`${sql.raw(`write${i}`)} as (${part})`))} select 1`.execute(trx);
  }
}

const quote = (column: string) => `"${column}"`;

function upsertOf(table: string, conflict: OnConflict | undefined): string {
  if (conflict === undefined) return '';
  const set = [
    ...conflict.update.map((c) => `${quote(c)} = excluded.${quote(c)}`),
    ...(conflict.add ?? []).map((c) => `${quote(c)} = ${quote(table)}.${quote(c)} + excluded.${quote(c)}`),
  ];
  if (conflict.touch !== undefined) {
    const changed = conflict.update.map((c) => `${quote(table)}.${quote(c)} is distinct from excluded.${quote(c)}`).join(' or ') || 'false';
    const t = quote(conflict.touch);
    set.push(`${t} = case when ${changed} then excluded.${t} else ${quote(table)}.${t} end`);
  }
  return ` on conflict (${conflict.key.map(quote).join(', ')}) do update set ${set.join(', ')}`;
}

/** An update's SET list and the match of its rows `v` by key. */
function updateOf(write: RowUpdate, columns: readonly string[]): { set: string; match: string } {
  return {
    set: columns
      .filter((c) => !write.key.includes(c))
      .map((c) => `${quote(c)} = v.${quote(c)}`)
      .join(', '),
    match: write.key.map((c) => `"${write.update}".${quote(c)} = v.${quote(c)}`).join(' and '),
  };
}

const SOURCE = '\u0000source\u0000';

function postgresSelect(write: RowSelect, json: string): RawBuilder<unknown> {
  const [before, after] = write.select(SOURCE).split(SOURCE) as [string, string];
  const target = `insert into "${write.insertSelect}" (${write.columns.map(quote).join(', ')}) `;
  return sql`${sql.raw(target + before)}json_populate_recordset(null::${sql.table(write.rowsOf)}, ${json}::json) v${sql.raw(after + upsertOf(write.insertSelect, write.onConflict))}`;
}

function sqliteSelect(write: RowSelect, rows: readonly object[], columns: readonly string[]): RawBuilder<unknown> {
  const values = sql.join(rows.map((row) => sql`(${sql.join(columns.map((c) => (row as Record<string, unknown>)[c]))})`));
  const target = `insert into "${write.insertSelect}" (${write.columns.map(quote).join(', ')}) `;
  // SQLite reads an ON CONFLICT after a SELECT as a join's ON unless the SELECT has a WHERE.
  return sql`with v(${sql.raw(columns.map(quote).join(', '))}) as (values ${values}) ${sql.raw(target + write.select('v') + upsertOf(write.insertSelect, write.onConflict))}`;
}

/** One PostgreSQL statement of a write, its rows the JSON given. */
function postgresWrite(write: RowInsert | RowUpdate, columns: readonly string[], json: string): RawBuilder<unknown> {
  if ('insert' in write) {
    const refs = sql.join(columns.map((c) => sql.ref(c)));
    return sql`insert into ${sql.table(write.insert)} (${refs}) select ${refs} from json_populate_recordset(null::${sql.table(write.insert)}, ${json}::json)${sql.raw(upsertOf(write.insert, write.onConflict))}`;
  }
  const { set, match } = updateOf(write, columns);
  return sql`update ${sql.table(write.update)} set ${sql.raw(set)} from json_populate_recordset(null::${sql.table(write.update)}, ${json}::json) v where ${sql.raw(match)}`;
}

/** One SQLite statement of a write, for `count` rows of bound values. */
function sqliteWrite(write: RowInsert | RowUpdate, columns: readonly string[], count: number): string {
  const row = `(${columns.map(() => '?').join(', ')})`;
  const values = `values ${Array.from({ length: count }, () => row).join(', ')}`;
  if ('insert' in write) return `insert into "${write.insert}" (${columns.map(quote).join(', ')}) ${values}${upsertOf(write.insert, write.onConflict)}`;
  const { set, match } = updateOf(write, columns);
  return `with v(${columns.map(quote).join(', ')}) as (${values}) update "${write.update}" set ${set} from v where ${match}`;
}

/**
 * Locks the rows a claim selects until its transaction ends, skipping rows that another
 * transaction holds, so that workers in several processes claim disjoint rows. PostgreSQL:
 * FOR UPDATE OF `table` SKIP LOCKED. SQLite: write transactions are already serialised.
 */
export function claimRows<QB extends SelectQueryBuilder<any, any, any>>(trx: DB, query: QB, table: string): QB {
  return isPostgres(trx) ? (query.forUpdate(table as never).skipLocked() as QB) : query;
}

/** claimRows for a statement written in SQL: its closing clause, for the rows of `alias`. */
export function claimClause(trx: DB, alias: string): RawBuilder<unknown> {
  return isPostgres(trx) ? sql`for update of ${sql.raw(alias)} skip locked` : sql``;
}

/**
 * The clause that ends a raw sub-select claiming a row others may hold: PostgreSQL `for update
 * skip locked`; nothing on SQLite, whose write transactions are already serialised.
 */
export function skipLockedSql(trx: DB): RawBuilder<unknown> {
  return isPostgres(trx) ? sql`for update skip locked` : sql``;
}

/**
 * Locks the rows a query selects until the transaction ends (PostgreSQL: FOR UPDATE). SQLite
 * write transactions are already serialised.
 */
export function lockedRows<QB extends SelectQueryBuilder<any, any, any>>(trx: DB, query: QB): QB {
  return isPostgres(trx) ? (query.forUpdate() as QB) : query;
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

/**
 * SQLite's page cache during a bulk write, in MB: the import's random index inserts (referral
 * codes, e-mails) read their pages back from the system's file cache cheaply, so 32 MB cost an
 * import of 1,000,000 customers no measurable CPU against 64 MB (16.8 s and 16.7 s on its
 * writing thread) and 43 MB less of peak RSS; 16 MB cost 0.8 s more.
 */
const BULK_WRITE_CACHE_MB = 32;

/**
 * Runs `write`, a bulk write into `table` (loyalty import), on a connection readied for it, and
 * settles the database after it. SQLite: commits are not synced one by one (synchronous NORMAL:
 * the WAL is synced at each checkpoint, and the final one syncs everything before the import
 * reports); 100 commits of 1,000,000 customers waited 6 s on their syncs (28.3 s against
 * 22.7 s). What a crash could lose of it is a re-run's to write again; the database stays whole.
 * Then the planner's statistics of the table are made now, not at the hourly optimize
 * (jobs.ts), so that a shop that grew from a few rows to a million is read through the right
 * indexes at once (SQLite samples, analysis_limit in connect.ts: 0.14 s after 1,000,000
 * customers). SQLite's WAL, which a server reading beside the import may have kept from being
 * reset, is copied into the database and truncated: a reader looks a page up through every
 * block of the WAL's index, so a long WAL slows every read until it is reset.
 */
export async function bulkWrite<T>(db: DB, table: string, write: () => Promise<T>): Promise<T> {
  if (isPostgres(db)) {
    const result = await write();
    await sql`analyze ${sql.table(table)}`.execute(db);
    return result;
  }
  const { rows } = await sql<{ cache_size: number }>`pragma cache_size`.execute(db);
  await sql.raw(`pragma cache_size = -${BULK_WRITE_CACHE_MB * 1024}`).execute(db);
  await sql`pragma synchronous = NORMAL`.execute(db);
  try {
    const result = await write();
    await sql`analyze ${sql.table(table)}`.execute(db);
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(db);
    return result;
  } finally {
    // connect.ts's settings again.
    await sql`pragma synchronous = FULL`.execute(db);
    await sql.raw(`pragma cache_size = ${Number(rows[0]!.cache_size)}`).execute(db);
  }
}

/**
 * A mark of everything the database holds, as this connection can see it: the same mark twice
 * means no data changed in between, so what was read under it may be read again from memory
 * (http/offset-checkpoints.ts); a different mark means nothing. Null inside a transaction, whose
 * own writes may yet be rolled back (on SQLite, while any transaction is open on the connection).
 * SQLite: the changes this connection made (total_changes(), every statement's rows, triggers'
 * too) and data_version, which moves when another connection (another process) commits.
 * PostgreSQL: the current snapshot (pg_current_snapshot()), which moves whenever any transaction
 * ends, and which every statement's reading snapshot equals while it does not. Both move for
 * writes to any table: coarse, never stale.
 */
export async function dataVersion(db: DB): Promise<string | null> {
  if (db.isTransaction) return null;
  if (isPostgres(db)) {
    const { rows } = await sql<{ version: string }>`select pg_current_snapshot()::text as version`.execute(db);
    return rows[0]!.version;
  }
  // Read at once (~10 µs, where Kysely's way to the connection cost ~90): undefined while a
  // transaction is open on the connection, whoever's it is.
  const rows = readNow(db.getExecutor().adapter, SQLITE_DATA_VERSION, []) as { version: string }[] | undefined;
  return rows === undefined ? null : rows[0]!.version;
}

const SQLITE_DATA_VERSION = "select total_changes() || ':' || data_version as version from pragma_data_version";

/**
 * `condition` marked as the one that narrows the rows most, so that SQLite ranges over the
 * index by it when the query bounds the same column already: given two lower bounds as
 * parameters, its planner estimates them alike and takes the first written (likelihood() is its
 * hint that a term is rarely true). PostgreSQL compares the bounds' values as it runs, and takes
 * the condition as it is.
 */
export function selective(db: DB, condition: RawBuilder<boolean>): RawBuilder<boolean> {
  return isPostgres(db) ? condition : sql<boolean>`likelihood(${condition}, 0.0001)`;
}
