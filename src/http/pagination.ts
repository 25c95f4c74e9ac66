import type { FastifyRequest } from 'fastify';
import { sql, type SelectQueryBuilder } from 'kysely';
import { Type, type Static, type TProperties, type TSchema } from 'typebox';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { readRows } from '../db/prepared.js';
import { fromKey, pageKeys, type KeyOrder, type PageKey } from './offset-checkpoints.js';
import { assertParams, queryParams, readParams } from './query.js';

// The one pagination implementation behind every list endpoint (docs/pagination.md).

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 250;
export const MAX_PAGE = 500;

const P = {
  sinceId: 'pagination[since_id]',
  limit: 'pagination[limit]',
  page: 'pagination[page]',
  perPage: 'pagination[per_page]',
  orderType: 'sort[order_type]',
  orderDirection: 'sort[order_direction]',
} as const;

export type SortDirection = 'asc' | 'desc';

export type PageRequest =
  { mode: 'cursor'; sinceId: number; limit: number } | { mode: 'offset'; page: number; perPage: number; sort: string; direction: SortDirection };

/** The parameters of each mode, read by ListQuery's schemas (built once per set of sort fields). */
const listQueries = new Map<string, TProperties>();

function listQueryOf(sortable: readonly string[]): TProperties {
  const key = sortable.join(',');
  let properties = listQueries.get(key);
  if (properties === undefined) listQueries.set(key, (properties = ListQuery(sortable).properties));
  return properties;
}

/**
 * Chooses the mode and validates the parameters that mode uses (and only those), by the
 * schemas of ListQuery that document them (docs/pagination.md):
 * - `pagination[per_page]` present: offset mode; since_id and limit are ignored.
 * - else `pagination[since_id]` or `pagination[limit]` present: cursor mode (since_id 0,
 *   limit 25 by default); page and sort parameters are ignored.
 * - else offset mode, page 1, 25 per page, ID ascending.
 * `sortable` names the sort[order_type] values the endpoint offers (`id` is always one).
 * Throws AppError('invalid_parameter') listing every bad parameter by name.
 */
export function parsePageRequest(params: URLSearchParams, sortable: readonly string[]): PageRequest {
  const errors: ErrorDetail[] = [];
  const properties = listQueryOf(sortable);
  const cursor = !params.has(P.perPage) && (params.has(P.sinceId) || params.has(P.limit));
  let page: PageRequest;
  if (cursor) {
    // Any integer ≥ 0 is a valid since_id; IDs stay below 2^53, so a larger one reads as the
    // largest possible ID: an empty last page.
    const sinceText = params.getAll(P.sinceId);
    const beyond = sinceText.length === 1 && /^\d+$/.test(sinceText[0]!) && BigInt(sinceText[0]!) > BigInt(Number.MAX_SAFE_INTEGER);
    const values = readParams(params, properties, errors, beyond ? [P.limit] : [P.sinceId, P.limit]);
    const sinceId = beyond ? Number.MAX_SAFE_INTEGER : Number(values[P.sinceId] ?? 0);
    page = { mode: 'cursor', sinceId, limit: Number(values[P.limit] ?? DEFAULT_PAGE_SIZE) };
  } else {
    const values = readParams(params, properties, errors, [P.page, P.perPage, P.orderType, P.orderDirection]);
    page = {
      mode: 'offset',
      page: Number(values[P.page] ?? 1),
      perPage: Number(values[P.perPage] ?? DEFAULT_PAGE_SIZE),
      sort: String(values[P.orderType] ?? 'id'),
      direction: (values[P.orderDirection] ?? 'asc') as SortDirection,
    };
  }
  assertParams(errors);
  return page;
}

// Brackets stay literal (`pagination[page]=2`) in every link we build, whatever the request
// used; everything else is percent-encoded.
const encode = (text: string) => encodeURIComponent(text).replace(/%5B/g, '[').replace(/%5D/g, ']');

/** The absolute URL of this request's path: PUBLIC_URL when configured, else the request's own origin. */
export function absoluteBase(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  const path = at < 0 ? request.url : request.url.slice(0, at);
  const origin = request.server.config.publicUrl ?? `${request.protocol}://${request.host}`;
  return origin + path;
}

/** A link to `page` that keeps every other query parameter, in order; page and per_page go last. */
function pageLink(base: string, params: URLSearchParams, page: number, perPage: number): string {
  const parts: string[] = [];
  for (const [key, value] of params) {
    if (key !== P.page && key !== P.perPage) parts.push(`${encode(key)}=${encode(value)}`);
  }
  parts.push(`${encode(P.page)}=${page}`, `${encode(P.perPage)}=${perPage}`);
  return `${base}?${parts.join('&')}`;
}

export interface CursorLinks {
  since_id: number;
  limit: number;
  next_since_id: number | null;
}

export interface OffsetLinks {
  self: string;
  next: string | null;
  last: string;
}

export interface Page<T> {
  links: CursorLinks | OffsetLinks;
  data: T[];
}

/** How one list endpoint pages: the parts that differ between resources. */
export interface ListSpec<Row, Item> {
  /**
   * The column holding the record's ID in the API sense (`remote_id` for synced records, `id`
   * for native ones); qualify it (`points_events.id`) when the query joins. The row property
   * of the same name (after the last dot) gives `next_since_id`.
   */
  idColumn: string;
  /**
   * Extra sort[order_type] values, each mapped to its column. `id` is always allowed and means
   * idColumn. Offer only columns with an index on (shop_id, column, id).
   */
  sortable: Readonly<Record<string, string>>;
  /** Rows of one page, in order, to the JSON of the records (may query more, e.g. balances). */
  toJson(rows: Row[]): Item[] | Promise<Item[]>;
  /**
   * Optional: the rows of a cursor page (ID above sinceId, ID ascending, at most `limit`), for
   * a list whose query is precompiled. It must select what `query` plus the cursor would.
   */
  cursorRows?(sinceId: number, limit: number): Promise<Row[]>;
  /**
   * Optional: the list's total when it is known without counting. An unfiltered list of a
   * shop's table reads it from the shop's stored row count (db/counts.ts); a filtered one
   * leaves this out and is counted, as far as page 500 reaches.
   */
  total?(): Promise<number>;
}

/**
 * The rows of `query` at these keys, in their order. Read as the run of rows from the first key
 * (a seek, then `keys.length` rows in the page's order): 1.5 ms of SQLite for 250 customers
 * against 1.8 ms by an IN list of their IDs, which Kysely also builds and compiles value by
 * value. A row written or deleted between the two reads shows as another ID in the run: then
 * the rows are read by their IDs, and one deleted since is left out.
 */
async function rowsByKey<Row>(
  db: DB,
  query: SelectQueryBuilder<any, any, Row>,
  spec: ListSpec<Row, unknown>,
  order: KeyOrder,
  keys: readonly PageKey[],
  idKey: keyof Row,
): Promise<Row[]> {
  const ordered = (order.sortColumn === order.idColumn ? query : query.orderBy(sql.ref(order.sortColumn), order.direction)).orderBy(
    sql.ref(order.idColumn),
    order.direction,
  );
  const run = await readRows(db, fromKey(db, ordered, order, keys[0]!).limit(keys.length), true);
  let same = run.length === keys.length;
  for (let i = 0; same && i < run.length; i++) same = Number(run[i]![idKey]) === Number(keys[i]!.page_id);
  if (same) return run;
  const ids = keys.map((k) => Number(k.page_id));
  const found = await readRows(db, query.where(sql.ref(spec.idColumn), 'in', ids), true);
  const byId = new Map(found.map((row) => [Number(row[idKey]), row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

type Source<Row> = SelectQueryBuilder<any, any, Row> | (() => SelectQueryBuilder<any, any, Row>);

const idKeyOf = <Row>(spec: ListSpec<Row, unknown>) => spec.idColumn.slice(spec.idColumn.lastIndexOf('.') + 1) as keyof Row;
const built = <Row>(source: Source<Row>) => (typeof source === 'function' ? source() : source);

/**
 * Answers a list request. `query` selects the rows of the authenticated shop that the list
 * shows (filters applied, no ORDER BY, LIMIT or OFFSET): paginate adds the page. It may be a
 * function that builds it, so that a cursor page served by `spec.cursorRows` builds nothing.
 * The mode and its parameters come from the query string (parsePageRequest).
 */
export async function paginate<Row, Item>(db: DB, request: FastifyRequest, source: Source<Row>, spec: ListSpec<Row, Item>): Promise<Page<Item>> {
  const params = queryParams(request);
  const wanted = parsePageRequest(params, ['id', ...Object.keys(spec.sortable).filter((f) => f !== 'id')]);
  if (wanted.mode === 'cursor') return cursorPage(source, spec, wanted);
  const base = absoluteBase(request);
  const { rows, links } = await offsetPage(db, built(source), spec, wanted, (page) => pageLink(base, params, page, wanted.perPage));
  return { links, data: await spec.toJson(rows) };
}

/**
 * A cursor page: rows with ID > since_id, ID ascending, limit + 1 fetched to know whether more
 * follow; next_since_id is the last ID shown when they do, null when not.
 */
export async function cursorPage<Row, Item>(source: Source<Row>, spec: ListSpec<Row, Item>, wanted: { sinceId: number; limit: number }): Promise<Page<Item>> {
  const rows = spec.cursorRows
    ? await spec.cursorRows(wanted.sinceId, wanted.limit + 1)
    : await built(source)
        .where(sql.ref(spec.idColumn), '>', wanted.sinceId)
        .orderBy(sql.ref(spec.idColumn), 'asc')
        .limit(wanted.limit + 1)
        .execute();
  const more = rows.length > wanted.limit;
  if (more) rows.length = wanted.limit;
  const data = await spec.toJson(rows);
  const nextSinceId = more ? Number(rows[rows.length - 1]![idKeyOf(spec)]) : null;
  return { links: { since_id: wanted.sinceId, limit: wanted.limit, next_since_id: nextSinceId }, data };
}

/**
 * An offset page: ORDER BY the sort column, then ID (same direction, so ties are stable),
 * LIMIT/OFFSET; the total, counted only as far as page 500 reaches (offsetTotal), gives
 * `last`. `link` makes the URL of a page; `next` is null from the last page on.
 */
export async function offsetPage<Row>(
  db: DB,
  query: SelectQueryBuilder<any, any, Row>,
  spec: ListSpec<Row, unknown>,
  wanted: { page: number; perPage: number; sort: string; direction: SortDirection },
  link: (page: number) => string,
): Promise<{ rows: Row[]; links: OffsetLinks }> {
  const { page, perPage, direction } = wanted;
  const idKey = idKeyOf(spec);
  const sortColumn = wanted.sort === 'id' ? spec.idColumn : spec.sortable[wanted.sort]!;
  const byId = sortColumn === spec.idColumn;
  const offset = (page - 1) * perPage;

  // A deferred join: the page's keys come from a narrow index (OFFSET skips index entries, not
  // whole rows), then only the page's rows are read, as the run from the first key (rowsByKey:
  // a seek marked selective, since a list's query may bound the ID already (records: above 0),
  // and given two lower bounds as parameters SQLite ranges over the first written and filters by
  // the other, so page 500 × 250 read 124,750 whole rows to show 250).
  // A deep page starts from the nearest key a page before it left (http/offset-checkpoints.ts).
  const keyed = query.clearSelect().select([sql.ref(spec.idColumn).as('page_id'), ...(byId ? [] : [sql.ref(sortColumn).as('page_sort')])]);
  const ordered = (byId ? keyed : keyed.orderBy(sql.ref(sortColumn), direction)).orderBy(sql.ref(spec.idColumn), direction);
  const keys = await pageKeys(
    db,
    ordered as unknown as SelectQueryBuilder<any, any, PageKey>,
    { sortColumn, idColumn: spec.idColumn, direction },
    offset,
    perPage,
  );
  const order: KeyOrder = { sortColumn, idColumn: spec.idColumn, direction };
  const rows = keys.length === 0 ? [] : await rowsByKey(db, query, spec, order, keys, idKey);

  const total = spec.total
    ? Math.min(MAX_PAGE * perPage, await spec.total())
    : await offsetTotal(db, query, { sortColumn, idColumn: spec.idColumn, direction, offset, perPage }, keys);
  const last = Math.min(MAX_PAGE, Math.max(1, Math.ceil(total / perPage)));
  return { rows, links: { self: link(page), next: page < last ? link(page + 1) : null, last: link(last) } };
}

/**
 * The total an offset page's `last` needs, counted only as far as page 500 reaches. A full
 * page counts only what follows its last row; a partial page is the last one; an empty page
 * past the end counts from the start.
 */
export async function offsetTotal<Row>(
  db: DB,
  query: SelectQueryBuilder<any, any, Row>,
  page: { sortColumn: string; idColumn: string; direction: SortDirection; offset: number; perPage: number },
  keys: readonly PageKey[],
): Promise<number> {
  const { sortColumn, idColumn, direction, offset, perPage } = page;
  const cap = MAX_PAGE * perPage;
  const counted = async (from: SelectQueryBuilder<any, any, Row>, limit: number) => {
    const { n } = await db
      .selectFrom(from.clearSelect().select(sql.lit(1).as('one')).limit(limit).as('counted'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(n);
  };
  if (keys.length > 0 && keys.length < perPage) return offset + keys.length;
  if (keys.length === 0) return offset === 0 ? 0 : counted(query, Math.min(offset, cap));
  if (offset + perPage >= cap) return cap;
  const lastKey = keys[keys.length - 1]!;
  const after = direction === 'asc' ? '>' : '<';
  const following =
    sortColumn === idColumn
      ? query.where(sql.ref(idColumn), after, lastKey.page_id)
      : query.where(sql<boolean>`(${sql.ref(sortColumn)}, ${sql.ref(idColumn)}) ${sql.raw(after)} (${lastKey.page_sort}, ${lastKey.page_id})`);
  return offset + perPage + (await counted(following, cap - offset - perPage));
}

// Schemas: the envelopes and the documented query parameters, for route declarations.

export const CursorLinksSchema = Type.Object(
  {
    since_id: Type.Integer({ minimum: 0, description: 'The since_id used for this request', examples: [0] }),
    limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: 'The limit used for this request', examples: [25] }),
    next_since_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The since_id of the next request; null when no more records follow',
      examples: [4812],
    }),
  },
  { $id: 'CursorLinks', title: 'CursorLinks', description: 'Cursor mode (pagination[since_id] or pagination[limit] without per_page)' },
);

export const OffsetLinksSchema = Type.Object(
  {
    // Absolute URLs, but not format: uri: the literal brackets of pagination[page] are not RFC 3986.
    self: Type.String({ description: 'This page', examples: ['https://api.example.com/merchant_api/v1/rewards?pagination[page]=2&pagination[per_page]=25'] }),
    next: Type.Union([Type.String(), Type.Null()], { description: 'The next page; null on the last page' }),
    last: Type.String({ description: 'Page min(500, max(1, ceil(total / per_page)))' }),
  },
  { $id: 'OffsetLinks', title: 'OffsetLinks', description: 'Offset mode (the default, or whenever pagination[per_page] is given)' },
);

/**
 * The response of a list endpoint: `links` in the shape of the mode used, `data` the records.
 * (One object with a union only on `links`, so the serialiser stays fast.)
 */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    // The title names the union once in the OpenAPI document (http/openapi-components.ts).
    links: Type.Union([Type.Ref('CursorLinks'), Type.Ref('OffsetLinks')], { title: 'ListLinks' }),
    data: Type.Array(item),
  });
}

/** Register once on the app so `ListEnvelope`'s references resolve (serialiser and OpenAPI). */
export const PAGINATION_SCHEMAS = [CursorLinksSchema, OffsetLinksSchema] as const;

/**
 * The documented query parameters of a list endpoint: pagination, sorting by `sortable` (plus
 * `id`), and the endpoint's own `filters`. The same schemas read the query string
 * (parsePageRequest, http/query.ts), which applies the mode rules.
 */
export function ListQuery<F extends TProperties = Record<string, never>>(sortable: readonly string[], filters?: F) {
  const fields = ['id', ...sortable.filter((f) => f !== 'id')];
  return Type.Object({
    [P.sinceId]: Type.Optional(Type.Integer({ minimum: 0, description: 'Cursor mode: records with an ID above this one (0 starts at the beginning)' })),
    [P.limit]: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Cursor mode: records per page' })),
    [P.page]: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Offset mode: page number' })),
    [P.perPage]: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_PAGE_SIZE,
        default: DEFAULT_PAGE_SIZE,
        description: 'Offset mode: records per page; when present, since_id and limit are ignored',
      }),
    ),
    // One field is a plain enum: an anyOf of one schema is flagged by OpenAPI linters.
    [P.orderType]: Type.Optional(
      fields.length === 1
        ? Type.Literal(fields[0]!, { description: 'Offset mode: field to sort by', default: 'id' })
        : Type.Union(
            fields.map((f) => Type.Literal(f)),
            { description: 'Offset mode: field to sort by (ties by ID)', default: 'id' },
          ),
    ),
    [P.orderDirection]: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc', description: 'Offset mode: sort direction' })),
    ...(filters ?? {}),
  });
}

export type ListQuery = Static<ReturnType<typeof ListQuery>>;
