import type Sqlite from 'better-sqlite3';
import {
  CompiledQuery,
  type LimitNode,
  RawNode,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { ConnectionQueue } from './connection-queue.js';

// Kysely's own SQLite driver prepares every statement anew and opens deferred transactions.
// This one keeps prepared statements (the API runs the same few hundred queries forever)
// and opens write transactions with BEGIN IMMEDIATE, so a second process on the same file
// waits on busy_timeout instead of failing with SQLITE_BUSY halfway through.

const STATEMENT_CACHE_SIZE = 500;

/**
 * The parameters of the statements kept, together, at most: a statement holds native memory in
 * proportion to them (SQLite's program and a cell per parameter: an INSERT of 1000 rows of 12
 * columns, 1.1 MB). The ledger's and the import's writes have as many rows as their batch, so a
 * statement is kept for each size met: by count alone, inserts of 501 to 1000 rows of 19
 * columns (batches of as many events) would have kept 612 MB. This keeps the sizes in use (an
 * import's statements of 30,000 parameters, table after table), the least recently used going
 * first.
 */
const STATEMENT_CACHE_PARAMETERS = 131_072;

interface Prepared {
  statement: Sqlite.Statement;
  /** A reader's rows as arrays → rows as objects keyed by its result columns. */
  toObjects: ToObjects;
  parameters: number;
  /** The SQL that reads this reader's rows as one JSON text (jsonReader); null when they may not be; undefined until asked. */
  json?: string | null;
}

/** Declared column types whose values JSON holds exactly: integers (below 2^53, as everywhere here) and text. */
const JSON_EXACT = /^(integer|int|bigint|text)$/i;

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * A page of rows is read fastest as one JSON text that SQLite writes and JSON.parse reads:
 * better-sqlite3 makes a JS value of every column of every row through the V8 API, which cost
 * more than all the rest of reading them (250 customers of 29 columns: 1.87 ms of CPU as arrays
 * against 1.02 ms as `json_group_array(json_array(…))` and JSON.parse; 40 µs of it is SQLite
 * finding the rows). Only for a reader whose every column is one of a table's, declared integer
 * or text, with distinct names: a REAL or a BLOB would not come back as it is, and an
 * expression's type is unknown. The subquery keeps its ORDER BY and LIMIT, so SQLite runs it as a
 * co-routine and the array holds its rows in its order.
 */
function jsonReader(sqlText: string, statement: Sqlite.Statement): string | null {
  const columns = statement.columns();
  const names = columns.map((c) => c.name);
  if (new Set(names).size !== names.length || !columns.every((c) => c.type !== null && JSON_EXACT.test(c.type))) return null;
  return `select json_group_array(json_array(${names.map(quoted).join(', ')})) from (${sqlText})`;
}

// Readers run in raw mode (rows as arrays) and rows become objects here: better-sqlite3 builds
// row objects through the V8 API one property at a time, which costs far more (a page of 26
// customers: 57 µs of CPU against 38 µs). Each statement gets a function made from its column
// names that builds a row as one object literal: V8 then makes every row with the same shape
// at once, where setting properties one by one walked through a shape per property (26 rows of
// 24 customer columns, in a microbenchmark: 2 µs against 52 µs; in the server the loop fared
// better, 2% of an offset page of 250 customers).
type ToObjects = (arrays: unknown[][]) => unknown[];

const noRows: ToObjects = () => [];

function rowMaker(columns: readonly string[]): ToObjects {
  // Names as JSON string literals are valid property names whatever they hold; a duplicate name
  // keeps the last value, as assigning them in turn did. __proto__ in a literal would set the
  // prototype instead of a property: such a statement keeps the loop.
  if (columns.includes('__proto__')) {
    return (arrays) =>
      arrays.map((values) => {
        const row: Record<string, unknown> = {};
        for (let c = 0; c < columns.length; c++) row[columns[c]!] = values[c];
        return row;
      });
  }
  const literal = columns.map((name, c) => `${JSON.stringify(name)}: v[${c}]`).join(', ');
  return new Function(
    'arrays',
    `const rows = new Array(arrays.length);
    for (let r = 0; r < arrays.length; r++) { const v = arrays[r]; rows[r] = { ${literal} }; }
    return rows;`,
  ) as ToObjects;
}

/**
 * Whether a query only reads, so that a reading connection may run it: a SELECT that Kysely
 * built, or raw SQL that starts as one. Anything else (a write, DDL, a pragma that may write) goes
 * to the writer.
 */
function readsOnly(compiled: CompiledQuery): boolean {
  if (SelectQueryNode.is(compiled.query)) return true;
  return RawNode.is(compiled.query) && /^\s*(select|with)\b/i.test(compiled.sql) && !/\b(insert|update|delete|replace)\b/i.test(compiled.sql);
}

class SqliteConnection implements DatabaseConnection {
  /** Least recently used first. */
  readonly #statements = new Map<string, Prepared>();
  #parameters = 0;

  constructor(
    readonly database: Sqlite.Database,
    /** A reading connection's writer: what this connection is given to write goes there (readsOnly). */
    private readonly writer?: Kysely<any>,
  ) {}

  get reading(): boolean {
    return this.writer !== undefined;
  }

  #prepare(sqlText: string, parameters: number): Prepared {
    let prepared = this.#statements.get(sqlText);
    if (prepared !== undefined) {
      this.#statements.delete(sqlText);
      this.#statements.set(sqlText, prepared);
      return prepared;
    }
    const statement = this.database.prepare(sqlText);
    prepared = { statement, toObjects: statement.reader ? rowMaker(statement.columns().map((c) => c.name)) : noRows, parameters };
    if (statement.reader) statement.raw(true);
    this.#statements.set(sqlText, prepared);
    this.#parameters += parameters;
    for (const [oldest, { parameters: size }] of this.#statements) {
      if (this.#statements.size <= STATEMENT_CACHE_SIZE && this.#parameters <= STATEMENT_CACHE_PARAMETERS) break;
      if (oldest === sqlText) break;
      this.#statements.delete(oldest);
      this.#parameters -= size;
    }
    return prepared;
  }

  /** A reading statement's rows, now; undefined when the SQL does not read. `asJson`: through jsonReader where it may. */
  readNow(sqlText: string, parameters: readonly unknown[], asJson = false): unknown[] | undefined {
    const prepared = this.#prepare(sqlText, parameters.length);
    const { statement, toObjects } = prepared;
    // INSERT … RETURNING reads too, but only the writer may run it.
    if (!statement.reader || (this.reading && !statement.readonly)) return undefined;
    if (asJson) {
      if (prepared.json === undefined) prepared.json = jsonReader(sqlText, statement);
      try {
        if (prepared.json !== null) {
          const [text] = this.#prepare(prepared.json, parameters.length).statement.get(...parameters) as [string];
          return toObjects(JSON.parse(text) as unknown[][]);
        }
      } catch {
        // A BLOB where the column says text ("JSON cannot hold BLOB values"): read as arrays from now on.
        prepared.json = null;
      }
    }
    return toObjects(statement.all(...parameters) as unknown[][]);
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const parameters = compiled.parameters as unknown[];
      if (this.writer !== undefined && !readsOnly(compiled)) return this.writer.executeQuery<R>(compiled);
      const { statement, toObjects } = this.#prepare(compiled.sql, parameters.length);
      if (statement.reader) return Promise.resolve({ rows: toObjects(statement.all(...parameters) as unknown[][]) as R[] });
      const { changes, lastInsertRowid } = statement.run(...parameters);
      return Promise.resolve({
        numAffectedRows: BigInt(changes),
        insertId: BigInt(lastInsertRowid),
        rows: [],
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiled.query)) throw new Error('SQLite can only stream SELECT queries');
    const { statement, toObjects } = this.#prepare(compiled.sql, compiled.parameters.length);
    // A reading connection is shared by every caller at once: an open iterator would make their
    // statements fail ("connection is busy"), so there the rows are read whole first.
    const rows =
      this.writer === undefined
        ? statement.iterate(...(compiled.parameters as unknown[]))
        : (statement.all(...(compiled.parameters as unknown[])) as unknown[]);
    for (const values of rows) {
      yield { rows: toObjects([values as unknown[]]) as R[] };
    }
  }
}

// SQLite has one connection, used by one caller at a time: the queue holds one permit.
class SqliteDriver implements Driver {
  readonly #connection: SqliteConnection;
  #release: (() => void) | null = null;

  constructor(
    connection: SqliteConnection,
    private readonly queue: ConnectionQueue,
  ) {
    this.#connection = connection;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.queue.acquire();
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if ((connection as SqliteConnection).reading)
      throw new Error('A reading SQLite connection takes no transaction: write through transaction() (db/dialect.ts)');
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    // SQLite rolls the whole transaction back itself on some errors (SQLITE_FULL, SQLITE_IOERR):
    // a second rollback would fail with "no transaction is active" and hide the error that
    // matters (http/error-handler.ts answers SQLITE_FULL 503, not 500).
    if (!(connection as SqliteConnection).database.inTransaction) return;
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = null;
    release?.();
  }

  async destroy(): Promise<void> {
    this.#connection.database.close();
  }
}

/**
 * Writes LIMIT's value as `+?`, not `?`. SQLite 3.53's planner reads the value bound to a bare
 * `limit ?` when it prepares the statement (sqlite3ExprIsInteger, for a LIMIT's row estimate), and
 * marks the statement to be prepared again whenever that parameter is bound anew, which
 * better-sqlite3 does at every run: every query with a LIMIT was parsed and planned at every run
 * (an empty page of VIP tiers: 24 µs of CPU in SQLite against 2 with the LIMIT written
 * literally; `limit +?` costs what the literal does). `+?` is the same integer; the planner
 * plans such a query as one without a LIMIT's estimate, as SQLite did before it looked at bound
 * values. Only the SQL Kysely builds is written so; a raw sql`… limit ${n}` writes sql.lit(n),
 * as the ones on a request's path do.
 */
class LimitQueryCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit +');
    this.visitNode(node.limit);
  }
}

/** The connection of each SQLite dialect's adapter: prepared queries read through it at once (readNow). */
const connections = new WeakMap<object, SqliteConnection>();

/**
 * The rows of a reading statement, read at once on the SQLite connection behind `adapter` (a
 * Kysely instance's, or a transaction's of it), when no transaction is open on it: then nothing
 * another caller does is half done there, and a statement, synchronous, runs whole before anything
 * else can. Undefined when the adapter is not SQLite's, when a transaction is open (the caller
 * goes through the line as usual, waiting for the holder), or when the SQL does not read.
 * Kysely's way to a connection and back (acquire, execute, release, each a promise) cost a small
 * prepared query ~20 µs of CPU beside the ~4 µs of the statement itself (a microbenchmark).
 * `asJson` is for a page of rows (jsonReader).
 */
export function readNow(adapter: object, sqlText: string, parameters: readonly unknown[], asJson = false): unknown[] | undefined {
  const connection = connections.get(adapter);
  if (connection === undefined || connection.database.inTransaction) return undefined;
  return connection.readNow(sqlText, parameters, asJson);
}

export class CachingSqliteDialect implements Dialect {
  // One connection, so that reads made at once (readNow) share its prepared statements.
  readonly #connection: SqliteConnection;

  constructor(
    database: Sqlite.Database,
    private readonly queue: ConnectionQueue,
    /** Makes this a reading connection: its writes, and only they, go to this writer. */
    writer?: Kysely<any>,
  ) {
    this.#connection = new SqliteConnection(database, writer);
  }
  createDriver(): Driver {
    return new SqliteDriver(this.#connection, this.queue);
  }
  createQueryCompiler() {
    return new LimitQueryCompiler();
  }
  createAdapter() {
    const adapter = new SqliteAdapter();
    connections.set(adapter, this.#connection);
    return adapter;
  }
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}
