import { sql, type SelectQueryBuilder } from 'kysely';
import { dataVersion, selective } from '../db/dialect.js';
import { readRows } from '../db/prepared.js';
import type { DB } from '../db/tables.js';

// Deep offset pages start from a checkpoint. OFFSET steps through every index entry before the
// page: page 500 × 250 stepped through 124,750 (11-13 ms of SQLite, most of the page's cost).
// Each page read deep enough leaves what it learnt, the keys at its first and last positions,
// and a later page of the same query starts from the nearest one at or before it: a seek to that
// key, then OFFSET only the distance from it. A key's position holds only while no data
// changes, so every checkpoint is kept under the database's data version (db/dialect.ts) and
// all are dropped when it moves: coarse (any write anywhere empties them) but never stale.

/** Offsets below this are stepped through as they are: the version's two reads would cost more. */
export const CHECKPOINTS_FROM = 2_500;
/** At most this many queries keep checkpoints (the oldest goes first)… */
const MAX_QUERIES = 50;
/** …each with at most this many: a page's two, for each of 500 pages. */
const MAX_CHECKPOINTS = 1_000;

/** A row of a page as the offset query keys it: its ID and, when sorted by another column, that value. */
export interface PageKey {
  page_id: number;
  page_sort?: unknown;
}

/** How the key query orders its rows, to seek to a key in that order. */
export interface KeyOrder {
  sortColumn: string;
  idColumn: string;
  direction: 'asc' | 'desc';
}

/** The checkpoints of one database, all read under one data version. */
interface Known {
  version: string;
  /** A key query (its SQL and values, without LIMIT and OFFSET) → position → the key there. */
  queries: Map<string, Map<number, PageKey>>;
}

/** Per database (its adapter, which its connections and transactions share). */
const known = new WeakMap<object, Known>();

/** The checkpoints of `query` valid under `version`, created when wanted. */
function checkpointsOf(db: DB, version: string, query: string, create: boolean): Map<number, PageKey> | undefined {
  const adapter = db.getExecutor().adapter;
  let held = known.get(adapter);
  if (held === undefined || held.version !== version) {
    if (!create) return undefined;
    known.set(adapter, (held = { version, queries: new Map() }));
  }
  let points = held.queries.get(query);
  if (points === undefined && create) {
    if (held.queries.size >= MAX_QUERIES) held.queries.delete(held.queries.keys().next().value!);
    held.queries.set(query, (points = new Map()));
  }
  return points;
}

/**
 * What identifies a key query: its SQL and its values. Null when a value is not one whose text
 * says all of it (a Date, a Buffer): such a query keeps no checkpoints.
 */
function queryKey(query: SelectQueryBuilder<any, any, PageKey>): string | null {
  const { sql: text, parameters } = query.compile();
  const values: string[] = [];
  for (const value of parameters) {
    const type = value === null ? 'null' : typeof value;
    if (type !== 'null' && type !== 'string' && type !== 'number' && type !== 'bigint' && type !== 'boolean') return null;
    values.push(`${type}:${String(value)}`);
  }
  return JSON.stringify([text, values]);
}

/** The checkpoint nearest at or before `offset`. */
function nearest(points: Map<number, PageKey> | undefined, offset: number): [number, PageKey] | undefined {
  let best: [number, PageKey] | undefined;
  for (const point of points ?? []) if (point[0] <= offset && (best === undefined || point[0] > best[0])) best = point;
  return best;
}

/** The rows of `query` from `key` on (that row first), in the query's order (which it must have). */
export function fromKey<Row>(db: DB, query: SelectQueryBuilder<any, any, Row>, order: KeyOrder, key: PageKey): SelectQueryBuilder<any, any, Row> {
  const on = order.direction === 'asc' ? sql.raw('>=') : sql.raw('<=');
  const id = sql.ref(order.idColumn);
  const condition =
    order.sortColumn === order.idColumn
      ? sql<boolean>`${id} ${on} ${key.page_id}`
      : sql<boolean>`(${sql.ref(order.sortColumn)}, ${id}) ${on} (${key.page_sort}, ${key.page_id})`;
  return query.where(selective(db, condition));
}

/**
 * The keys of one offset page: `query` (ordered, without LIMIT and OFFSET) from `offset`, at most
 * `perPage`, exactly as LIMIT/OFFSET would give them; from a checkpoint when one is known under
 * the data version read before and again after (so that no write fell between the checkpoint and
 * the page). When the version moved, a page read from a checkpoint is read again in full.
 */
export async function pageKeys(db: DB, query: SelectQueryBuilder<any, any, PageKey>, order: KeyOrder, offset: number, perPage: number): Promise<PageKey[]> {
  const read = (q: SelectQueryBuilder<any, any, PageKey>, skip: number) => readRows(db, q.limit(perPage).offset(skip));
  const key = offset < CHECKPOINTS_FROM ? null : queryKey(query);
  const version = key === null ? null : await dataVersion(db);
  if (key === null || version === null) return read(query, offset);
  const start = nearest(checkpointsOf(db, version, key, false), offset);
  const keys = start === undefined ? await read(query, offset) : await read(fromKey(db, query, order, start[1]), offset - start[0]);
  if ((await dataVersion(db)) !== version) return start === undefined ? keys : read(query, offset);
  const points = checkpointsOf(db, version, key, true)!;
  if (keys.length > 0 && points.size < MAX_CHECKPOINTS - 1) {
    points.set(offset, keys[0]!);
    points.set(offset + keys.length - 1, keys[keys.length - 1]!);
  }
  return keys;
}
