import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { allocateIds, insertRows } from '../db/dialect.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB, Tables } from '../db/tables.js';
import { recordsJson, shownColumns, type Exclusive, type Resource, type Row } from './resource.js';

// The SQL of every record resource. Tables come from descriptions, so the builder is untyped
// here; every function takes the shop and filters on it.

const any = (db: DB) => db as unknown as Kysely<any>;

/**
 * Rows of the shop as shown (no secrets), unordered: the list endpoints page it (http/pagination.ts).
 * Only IDs above 0: a redacted customer's ledger is kept under a negative one (customers/redact.ts).
 */
export function selectRecords(db: DB, shopId: number, r: Resource): SelectQueryBuilder<any, any, Row> {
  return any(db).selectFrom(r.table).select(shownColumns(r)).where('shop_id', '=', shopId).where(r.id, '>', 0);
}

// A cursor page is the hottest list query: built and compiled once per resource (db/prepared.ts),
// the same SQL that paginate would build from selectRecords.
const cursorQueries = new WeakMap<Resource, (db: Kysely<any>, values: { shopId: number; sinceId: number; limit: number }) => Promise<Row[]>>();

/** Rows of the shop with IDs above `sinceId`, ID ascending, at most `limit`. */
export async function cursorRecords(db: DB, shopId: number, r: Resource, sinceId: number, limit: number): Promise<Row[]> {
  let query = cursorQueries.get(r);
  if (query === undefined) {
    query = prepareQuery<{ shopId: number; sinceId: number; limit: number }, Row>(
      (kdb, p) =>
        kdb
          .selectFrom(r.table)
          .select(shownColumns(r))
          .where('shop_id', '=', p.value('shopId'))
          .where(r.id, '>', p.value('sinceId'))
          .orderBy(r.id, 'asc')
          .limit(p.value('limit')),
      true,
    );
    cursorQueries.set(r, query);
  }
  return query(any(db), { shopId, sinceId, limit });
}

export async function findRecord(db: DB, shopId: number, r: Resource, id: number): Promise<Row | undefined> {
  return any(db).selectFrom(r.table).selectAll().where('shop_id', '=', shopId).where(r.id, '=', id).executeTakeFirst();
}

/** A record as shown (its computed fields too); undefined when the shop has none with this id. */
export async function shownRecord(db: DB, shopId: number, r: Resource, id: number, now: number): Promise<Row | undefined> {
  const row = await findRecord(db, shopId, r, id);
  return row === undefined ? undefined : (await recordsJson(db, shopId, r, [row], now))[0];
}

/** Inserts native records under new ids, many per statement; returns the ids in order. */
export async function insertRecords(db: DB, shopId: number, r: Resource, rows: Row[], now: number): Promise<number[]> {
  const ids = await allocateIds(db, shopId, r.table, rows.length);
  const chunk = rows.length === 0 ? 1 : Math.max(1, Math.floor(30_000 / (Object.keys(rows[0]!).length + 4)));
  for (let i = 0; i < rows.length; i += chunk) {
    await any(db)
      .insertInto(r.table)
      .values(rows.slice(i, i + chunk).map((row, j) => ({ shop_id: shopId, id: ids[i + j], ...row, created_at: now, updated_at: now })))
      .execute();
  }
  return ids;
}

/** Inserts a native record under a new id. */
export async function insertRecord(db: DB, shopId: number, r: Resource, values: Row, now: number): Promise<Row> {
  const [id] = await insertRecords(db, shopId, r, [values], now);
  return (await findRecord(db, shopId, r, id!))!;
}

/**
 * Inserts or replaces records by remote_id, many per statement, as they are stored: each row
 * holds shop_id, remote_id, created_at and updated_at (now) too, the same columns, and no
 * remote_id twice. created_at is kept on replace, and updated_at unless a field changed; so are
 * the `insertOnly` columns, written only into new records.
 */
export async function upsertStored(db: DB, r: Resource, rows: Row[], insertOnly: readonly string[] = []): Promise<void> {
  if (rows.length === 0) return;
  const kept = new Set(['shop_id', 'remote_id', 'created_at', 'updated_at', ...insertOnly]);
  const columns = Object.keys(rows[0]!).filter((c) => !kept.has(c));
  await insertRows(db, r.table as keyof Tables, rows as never, { key: ['shop_id', 'remote_id'], update: columns, touch: 'updated_at' });
}

/**
 * Writes one record by remote_id: inserts it, or replaces the fields of the one that exists.
 * Whether it was created is told by the insert itself, so two racing PUTs of a new record
 * answer one 201 and one 200 (on PostgreSQL the second insert waits for the first to commit).
 * `changed`: whether it was created or a field took another value.
 */
export async function putRecord(
  db: DB,
  shopId: number,
  r: Resource,
  remoteId: number,
  values: Row,
  now: number,
): Promise<{ created: boolean; changed: boolean }> {
  const inserted = await any(db)
    .insertInto(r.table)
    .values({ shop_id: shopId, remote_id: remoteId, ...values, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['shop_id', 'remote_id']).doNothing())
    .returning('remote_id')
    .executeTakeFirst();
  if (inserted !== undefined) return { created: true, changed: true };
  return { created: false, changed: (await updateRecord(db, shopId, r, remoteId, values, now)) !== undefined };
}

/**
 * Sets `values` on the record, and updated_at to now, only when one of them is another value
 * than the stored one (updated_at moves on a change a client can see, and only then); returns
 * the record as changed, or undefined when nothing changed or there is no such record.
 */
export async function updateRecord(db: DB, shopId: number, r: Resource, id: number, values: Row, now: number): Promise<Row | undefined> {
  const differs = Object.entries(values).map(([column, value]) => sql<boolean>`${sql.ref(column)} is distinct from ${value}`);
  if (differs.length === 0) return undefined;
  return any(db)
    .updateTable(r.table)
    .set({ ...values, updated_at: now })
    .where('shop_id', '=', shopId)
    .where(r.id, '=', id)
    .where((eb) => eb.or(differs))
    .returningAll()
    .executeTakeFirst();
}

export async function deleteRecord(db: DB, shopId: number, r: Resource, id: number): Promise<boolean> {
  const result = await any(db).deleteFrom(r.table).where('shop_id', '=', shopId).where(r.id, '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Which of `values` other records of the shop already hold in a unique field, with the ID of
 * the holder; 'ci' compares lower-cased (values must be given lower-cased).
 */
export async function holdersOf(db: DB, shopId: number, r: Resource, field: string, mode: 'exact' | 'ci', values: unknown[]): Promise<Map<unknown, number>> {
  const out = new Map<unknown, number>();
  const query = holdersQuery(r, field, mode);
  for (let i = 0; i < values.length; i += 500) {
    const chunk = values.slice(i, i + 500);
    for (const row of await query(any(db), { shopId, values: chunk }, chunk.length)) out.set(row.value, Number(row[r.id]));
  }
  return out;
}

type HoldersQuery = ReturnType<typeof prepareHolders>;
// Asked for every 500 rows of an import batch: built once per resource, field and count of values.
const holdersQueries = new WeakMap<Resource, Map<string, HoldersQuery>>();

function holdersQuery(r: Resource, field: string, mode: 'exact' | 'ci'): HoldersQuery {
  let byField = holdersQueries.get(r);
  if (byField === undefined) holdersQueries.set(r, (byField = new Map()));
  let query = byField.get(`${mode}:${field}`);
  if (query === undefined) byField.set(`${mode}:${field}`, (query = prepareHolders(r, field, mode)));
  return query;
}

function prepareHolders(r: Resource, field: string, mode: 'exact' | 'ci') {
  const column = mode === 'ci' ? sql<string>`lower(${sql.ref(field)})` : sql.ref(field);
  return prepareQuery<{ shopId: number; values: readonly unknown[] }, Row, number>((db, p, count) =>
    db
      .selectFrom(r.table)
      .select([r.id, sql<unknown>`${column}`.as('value')])
      .where('shop_id', '=', p.value('shopId'))
      .where(column, 'in', p.list('values', count)),
  );
}

/** Which of `ids` name records of the shop in `table` (by `column`). */
/** The IDs of the shop's records that hold `value` in `rule.field` while `rule.when` holds. */
export async function holdersWhen(db: DB, shopId: number, r: Resource, rule: Exclusive, value: unknown): Promise<number[]> {
  const rows = await any(db)
    .selectFrom(r.table)
    .select(r.id)
    .where('shop_id', '=', shopId)
    .where(rule.field, '=', value)
    .where(rule.when.field, '=', rule.when.value)
    .execute();
  return rows.map((row: Row) => Number(row[r.id]));
}

export async function existingIds(db: DB, shopId: number, table: string, column: string, ids: number[]): Promise<Set<number>> {
  const found = new Set<number>();
  // Chunked: an import batch may ask about more ids than a statement may bind.
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await any(db)
      .selectFrom(table)
      .select(column)
      .where('shop_id', '=', shopId)
      .where(column, 'in', ids.slice(i, i + 1000))
      .execute();
    for (const row of rows) found.add(Number(row[column]));
  }
  return found;
}

/** Which of `ids` already exist (upsert: 201 for new records, 200 for replaced ones). */
export async function existingRecords(db: DB, shopId: number, r: Resource, ids: number[]): Promise<Set<number>> {
  return existingIds(db, shopId, r.table, r.id, ids);
}
