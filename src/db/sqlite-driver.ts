import type Sqlite from 'better-sqlite3';
import {
  CompiledQuery,
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

interface Prepared {
  statement: Sqlite.Statement;
  /** Result column names of a reader, in order. */
  columns: string[];
}

// Readers run in raw mode (rows as arrays) and rows become objects here: better-sqlite3 builds
// row objects through the V8 API one property at a time, which costs far more (a page of 26
// customers: 57 µs of CPU against 38 µs).
function toObjects<R>(arrays: unknown[][], columns: string[]): R[] {
  const rows = new Array<R>(arrays.length);
  for (let r = 0; r < arrays.length; r++) {
    const values = arrays[r]!;
    const row: Record<string, unknown> = {};
    for (let c = 0; c < columns.length; c++) row[columns[c]!] = values[c];
    rows[r] = row as R;
  }
  return rows;
}

class SqliteConnection implements DatabaseConnection {
  readonly #statements = new Map<string, Prepared>();

  constructor(readonly database: Sqlite.Database) {}

  #prepare(sqlText: string): Prepared {
    let prepared = this.#statements.get(sqlText);
    if (prepared === undefined) {
      const statement = this.database.prepare(sqlText);
      prepared = { statement, columns: statement.reader ? statement.columns().map((c) => c.name) : [] };
      if (statement.reader) statement.raw(true);
      if (this.#statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
      this.#statements.set(sqlText, prepared);
    }
    return prepared;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const { statement, columns } = this.#prepare(compiled.sql);
      const parameters = compiled.parameters as unknown[];
      if (statement.reader) return Promise.resolve({ rows: toObjects<R>(statement.all(...parameters) as unknown[][], columns) });
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
    const { statement, columns } = this.#prepare(compiled.sql);
    for (const values of statement.iterate(...(compiled.parameters as unknown[]))) {
      yield { rows: toObjects<R>([values as unknown[]], columns) };
    }
  }
}

// SQLite has one connection, used by one caller at a time: the queue holds one permit.
class SqliteDriver implements Driver {
  readonly #connection: SqliteConnection;
  #release: (() => void) | null = null;

  constructor(
    database: Sqlite.Database,
    private readonly queue: ConnectionQueue,
  ) {
    this.#connection = new SqliteConnection(database);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.queue.acquire();
    this.#release = release;
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
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

export class CachingSqliteDialect implements Dialect {
  constructor(
    private readonly database: Sqlite.Database,
    private readonly queue: ConnectionQueue,
  ) {}
  createDriver(): Driver {
    return new SqliteDriver(this.database, this.queue);
  }
  createQueryCompiler() {
    return new SqliteQueryCompiler();
  }
  createAdapter() {
    return new SqliteAdapter();
  }
  createIntrospector(db: Kysely<any>) {
    return new SqliteIntrospector(db);
  }
}
