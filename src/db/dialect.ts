import { createHash } from 'node:crypto';
import { CompiledQuery, PostgresAdapter, sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB, Tables } from './tables.js';

// Everything that is written differently for SQLite and PostgreSQL above the driver.

export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

const RETRYABLE_PG_CODES = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

/**
 * Runs fn in a write transaction. SQLite transactions are serialised by the single
 * connection and begin IMMEDIATE; PostgreSQL ones are retried on serialization failure or
 * deadlock, which should be rare since writers lock rows in a fixed order.
 */
export async function transaction<T>(db: DB, fn: (trx: DB) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= MAX_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_PG_CODES.has(code)) throw error;
    }
  }
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
 * Hands out `count` new ids for a table, ascending. On PostgreSQL they come from the table's
 * identity sequence under a per-shop transaction lock, so within a shop ids become visible in
 * the order they were handed out and a since_id cursor never skips a row that commits late.
 * SQLite writes are already serialised.
 */
export async function allocateIds(trx: DB, shopId: number, table: string, count: number): Promise<number[]> {
  if (count <= 0) return [];
  if (isPostgres(trx)) {
    await sql`select pg_advisory_xact_lock(${lockKey(`ids:${shopId}:${table}`).toString()}::bigint)`.execute(trx);
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

/**
 * Locks customers' rows until the transaction ends, so that ledger writes touching the same
 * customers run one after another. PostgreSQL: SELECT ... FOR UPDATE, in ascending remote_id
 * so that two writers always lock in the same order and never deadlock. SQLite: write
 * transactions are already serialised (one connection, BEGIN IMMEDIATE).
 */
export async function lockCustomers(trx: DB, shopId: number, remoteIds: readonly number[]): Promise<void> {
  if (!isPostgres(trx) || remoteIds.length === 0) return;
  const sorted = [...new Set(remoteIds)].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i += 1000) {
    await trx
      .selectFrom('customers')
      .select('remote_id')
      .where('shop_id', '=', shopId)
      .where('remote_id', 'in', sorted.slice(i, i + 1000))
      .orderBy('remote_id')
      .forUpdate()
      .execute();
  }
}

const MAX_SQLITE_PARAMETERS = 30_000;

/** What an insert does with a row whose key exists: an upsert. */
export interface OnConflict {
  /** The columns of the unique key. */
  key: readonly string[];
  /** The columns set from the new row; the others keep what is stored. */
  update: readonly string[];
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
    ? ` on conflict (${onConflict.key.map(quote).join(', ')}) do update set ${onConflict.update.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}`
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
