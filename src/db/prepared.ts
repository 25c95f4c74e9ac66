import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import { readNow } from './sqlite-driver.js';

// Building a Kysely query costs more than running it when the query is small and hot (a page's
// balances: ~30 µs to build and compile a 25-value IN list, a few µs to run it on SQLite). A
// prepared query is built and compiled once per database and shape, then run with new values.
// The SQL text stays the same, so the SQLite driver reuses its prepared statement as well, and
// PostgreSQL keeps it as a named statement on each connection that runs it (db/connect.ts):
// parsed once, and planned once for every value (a generic plan) where that plans no worse.
// Planning was most of what PostgreSQL spent on a cursor page of customers (the planner weighs
// each of the table's thirteen indexes): its three queries cost the server about 700 µs of CPU
// unnamed and 240 µs named (pgbench, bench/workers.ts).

/** Stands in for a value given at execution: `values[name]`, or `values[name][index]`. */
class Slot {
  constructor(
    readonly name: string,
    readonly index: number | null,
  ) {}
}

/** Placeholders for `build`: `p.x` is one value, `p.list('ids', n)` a list of n values. */
export interface Placeholders<V> {
  value<K extends keyof V & string>(name: K): V[K];
  list<K extends keyof V & string>(name: K, length: number): V[K];
}

const placeholders: Placeholders<any> = {
  value: (name) => new Slot(name, null) as any,
  list: (name, length) => Array.from({ length }, (_, i) => new Slot(name, i)) as any,
};

/** The statement name of each prepared query's SQL in this process (connections are its own). */
const statementNames = new Map<string, string>();

/** The statement name of `sql` when it is a prepared query's; undefined for any other SQL. */
export function statementName(sql: string): string | undefined {
  return statementNames.get(sql);
}

/**
 * A query that `build` makes from placeholders instead of values; run it with `values`.
 * `shape` names what changes the SQL text besides the values (the length of an IN list), and
 * is passed back to `build`. Compiled queries are kept per database dialect and shape.
 */
export function prepareQuery<V extends Record<string, unknown>, R, S extends string | number = string>(
  build: (db: Kysely<any>, p: Placeholders<V>, shape: S) => Compilable<R>,
  /** A page of rows: read on SQLite as one JSON text (db/sqlite-driver.ts, jsonReader). */
  asJson = false,
) {
  const compiled = new WeakMap<object, Map<S, CompiledQuery<R>>>();
  return async (db: Kysely<any>, values: V, shape: S = '' as S): Promise<R[]> => {
    // Transactions share their database's adapter, so they share its compiled queries too.
    const executor = db.getExecutor();
    const key = executor.adapter;
    let byShape = compiled.get(key);
    if (byShape === undefined) compiled.set(key, (byShape = new Map()));
    let query = byShape.get(shape);
    if (query === undefined) {
      byShape.set(shape, (query = build(db, placeholders as Placeholders<V>, shape).compile()));
      if (!statementNames.has(query.sql)) statementNames.set(query.sql, `loyalty_${statementNames.size + 1}`);
    }
    const parameters = query.parameters.map((p) => {
      if (!(p instanceof Slot)) return p;
      const value = values[p.name];
      return p.index === null ? value : (value as readonly unknown[])[p.index];
    });
    return run(db, { ...query, parameters }, asJson);
  };
}

/** Runs a compiled reader: at once on SQLite when no transaction is open (readNow), else through Kysely. */
async function run<R>(db: Kysely<any>, compiled: CompiledQuery<R>, asJson: boolean): Promise<R[]> {
  // Kysely's plugins (none are used) would be skipped by readNow, so a database with any goes the usual way.
  const executor = db.getExecutor();
  const rows = executor.plugins.length === 0 ? readNow(executor.adapter, compiled.sql, compiled.parameters, asJson) : undefined;
  if (rows !== undefined) return rows as R[];
  return (await db.executeQuery<R>(compiled)).rows;
}

/**
 * The rows of a built query, read at once on SQLite when no transaction is open (readNow), else
 * through Kysely as `execute` would. An offset page read its keys and rows through Kysely's line
 * (an await per acquire, and a turn of the event loop whenever another request held the
 * connection), which let concurrent pages interleave, each holding its 250 rows while the others
 * read theirs: page 500 × 250 of customers at 10 connections cost 13.3 ms of server CPU a
 * request, 8.2 ms read at once (same run); one page at a time, the two differed by ~1 ms.
 * `asJson`: a page of rows, read on SQLite as one JSON text (db/sqlite-driver.ts, jsonReader).
 */
export async function readRows<R>(db: Kysely<any>, query: Compilable<R>, asJson = false): Promise<R[]> {
  return run(db, query.compile(), asJson);
}
