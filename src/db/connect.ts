import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { checkpointInBackground, type CheckpointerOptions } from './checkpointer.js';
import { ConnectionQueue } from './connection-queue.js';
import { statementName } from './prepared.js';
import { setWriteDatabase } from './dialect.js';
import { Replicas, type ReplicaSettings } from './replicas.js';
import { CachingSqliteDialect } from './sqlite-driver.js';
import type { DB, Tables } from './tables.js';
import { localDay } from '../core/time-zones.js';

export type DialectName = 'sqlite' | 'postgres';

export interface Database {
  readonly db: DB;
  readonly dialect: DialectName;
  /** Quick liveness probe for /readyz. */
  ping(): Promise<void>;
  /**
   * The lines for a connection: for reads, and for write transactions, which have connections of
   * their own on PostgreSQL (on SQLite both are the one line for its one connection).
   */
  readonly lines: { readonly reads: Line; readonly writes: Line };
  /** The connections it may use at once. */
  readonly connections: number;
  /** PostgreSQL's read replicas (DATABASE_REPLICA_URLS); null without them, and always on SQLite. */
  readonly replicas: Replicas | null;
  close(): Promise<void>;
}

/** What a line for connections tells of its load (db/connection-queue.ts). */
export type Line = Pick<ConnectionQueue, 'oldestWaitMs'>;

export interface ConnectOptions {
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** A caller that waits this long for a connection fails with DatabaseBusyError; default: no limit. */
  maxQueueWaitMs?: number;
  /** SQLite's page cache in MB; default 64 (the CLI's one-off commands: an import's indexes). */
  sqliteCacheMb?: number;
  /**
   * SQLite: reads outside a transaction go through a connection of their own, which never waits
   * for the writer's (WAL lets it read the last commit while a write transaction is open). The
   * server's choice; a one-off command keeps the one connection.
   */
  readConnection?: boolean;
  /**
   * SQLite: checkpoints the WAL from a thread of its own (db/checkpointer.ts), not inside the
   * writer's commits, so that no request waits for the database file's fsync. The server's choice.
   */
  backgroundCheckpoints?: CheckpointerOptions;
  /** PostgreSQL hot standbys that serve reads outside a transaction (db/replicas.ts); the server's choice. */
  replicas?: ReplicaSettings & { readonly urls: readonly string[] };
}

export function parseDatabaseUrl(url: string): { dialect: DialectName; location: string } {
  if (url.startsWith('sqlite:')) {
    const location = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (location === '') throw new Error('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/loyalty.db');
    return { dialect: 'sqlite', location };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { dialect: 'postgres', location: url };
  throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url}"`);
}

function openSqlite(file: string, cacheMb: number, reading = false): BetterSqlite3.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sqlite = new BetterSqlite3(file);
  // A reading connection refuses any write (it hands them to the writer: sqlite-driver.ts).
  if (reading) sqlite.pragma('query_only = ON');
  else sqlite.pragma('journal_mode = WAL');
  // FULL makes every commit durable against power loss, not only against a process crash.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`cache_size = -${cacheMb * 1024}`);
  sqlite.pragma('temp_store = MEMORY');
  // The planner's statistics, refreshed now and hourly (the optimize-database job). Without them
  // it reads one customer's events by walking the shop's whole table in ID order (12 ms at 150,000
  // events against 0.1 ms through points_events_customer). The limit keeps each pass quick.
  sqlite.pragma('analysis_limit = 1000');
  if (!reading) sqlite.pragma('optimize = 0x10002');
  // Integers beyond 2^53 never occur (ids and amounts are validated), so plain numbers are safe.
  sqlite.defaultSafeIntegers(false);
  // The local day of an instant in a zone (dialect.ts, localDaySql), from the runtime's zone database.
  sqlite.function('local_day', { deterministic: true }, (ms, zone) => localDay(Number(ms), String(zone)));
  return sqlite;
}

// int8 (count, bigint columns) and numeric (sum of bigint) arrive as strings by default.
// Every such value here is an integer well inside 2^53, so it is parsed to a number.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format as any);
  },
};

/** PostgreSQL connections that write transactions leave to reads, at least. */
const READ_RESERVE = 2;
/**
 * PostgreSQL connections kept for write transactions, at most. A shop's writers queue for its
 * lock on new ids (db/dialect.ts, allocateIds) while they insert: more of them at once only
 * wait inside PostgreSQL, where no line of ours sees the wait or bounds it (under 500 clients,
 * batches then took up to 12 s). So one shop's requests hold at most two of them
 * (http/shop-writes.ts), and the others are there for other shops' writes.
 */
const MAX_WRITERS = 4;

const ignore = (): void => {};

/**
 * How long opening a PostgreSQL connection may take. A server that is restarting may accept the
 * socket and then answer nothing for a while: a request that waits for the queue only a second
 * must not then wait ten for the connection (it answers 503 instead, and the pool tries again for
 * the next one). Without a bound on the queue (the CLI) it may take longer.
 */
function connectTimeoutMs(maxQueueWaitMs: number | undefined): number {
  return maxQueueWaitMs !== undefined && Number.isFinite(maxQueueWaitMs) ? Math.max(2000, 2 * maxQueueWaitMs) : 10_000;
}

/** SQLSTATE of "cached plan must not change result type": a named statement's table changed under it. */
const FEATURE_NOT_SUPPORTED = '0A000';
const naming = new WeakSet<pg.PoolClient>();
const stale = new WeakSet<pg.PoolClient>();

/**
 * Sends prepared queries' SQL (db/prepared.ts) as named statements, which PostgreSQL parses once
 * per connection and, where a generic plan is no worse, plans once. A statement whose result
 * columns changed since (`select *` across a migration made by another process) fails on that
 * connection from then on, so the connection is closed when it is given back.
 */
function nameStatements(client: pg.PoolClient): void {
  if (naming.has(client)) return;
  naming.add(client);
  // The client's own query, looked up at each call (not bound once), so that what wraps pg's
  // Client later (a test's spy) still sees every statement.
  const query = (...args: unknown[]) => (Object.getPrototypeOf(client) as { query: (...a: unknown[]) => Promise<unknown> }).query.apply(client, args);
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const name = typeof args[0] === 'string' && args.length === 2 ? statementName(args[0]) : undefined;
    if (name === undefined) return query(...args);
    return query({ name, text: args[0], values: args[1] }).catch((error: { code?: string }) => {
      if (error?.code === FEATURE_NOT_SUPPORTED) stale.add(client);
      throw error;
    });
  };
}

/** A pool of `size` PostgreSQL connections, the line in front of it, and Kysely over both. */
function postgresPool(location: string, size: number, maxQueueWaitMs: number | undefined): { db: DB; queue: ConnectionQueue; pool: pg.Pool } {
  const pool = new pg.Pool({ connectionString: location, max: size, types: pgTypes, connectionTimeoutMillis: connectTimeoutMs(maxQueueWaitMs) });
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', ignore);
  // Callers wait in the queue, not in the pool's own line, so that their wait is bounded and seen.
  const queue = new ConnectionQueue(size, maxQueueWaitMs);
  const queued = {
    async connect() {
      const release = await queue.acquire();
      try {
        const client = await pool.connect();
        // A client whose server goes away while it is lent (pg_terminate_backend, a restart)
        // emits 'error', which pg-pool listens to only while the client is idle: unheard, it
        // would end the process. The query in progress fails on its own (503, http/error-handler.ts)
        // and the pool drops the client when it comes back unqueryable.
        client.on('error', ignore);
        nameStatements(client);
        const giveBack = client.release;
        client.release = (err?: Error | boolean) => {
          client.release = giveBack;
          client.off('error', ignore);
          release();
          giveBack.call(client, err || stale.has(client));
        };
        return client;
      } catch (error) {
        release();
        throw error;
      }
    },
    end: () => pool.end(),
  };
  return { db: new Kysely<Tables>({ dialect: new PostgresDialect({ pool: queued }) }), queue, pool };
}

/**
 * SQLite: one connection that writes, used by one caller at a time (a transaction holds it across
 * awaits), and with `readConnection` one more that reads, shared by every caller at once: its
 * statements run whole, synchronously, and see the last commit, so a read never waits in the
 * writer's line for a transaction to finish. A :memory: database is one connection's own.
 */
function connectSqlite(location: string, options: ConnectOptions): Database {
  const cacheMb = options.sqliteCacheMb ?? 64;
  const sqlite = openSqlite(location, cacheMb);
  const queue = new ConnectionQueue(1, options.maxQueueWaitMs, true);
  const writer = new Kysely<Tables>({ dialect: new CachingSqliteDialect(sqlite, queue) });
  const separate = options.readConnection === true && location !== ':memory:';
  const readLine = separate ? new ConnectionQueue(Infinity) : queue;
  const db = separate ? new Kysely<Tables>({ dialect: new CachingSqliteDialect(openSqlite(location, cacheMb, true), readLine, writer) }) : writer;
  if (separate) setWriteDatabase(db, writer);
  const checkpointer =
    options.backgroundCheckpoints !== undefined && location !== ':memory:' ? checkpointInBackground(sqlite, location, options.backgroundCheckpoints) : null;
  return {
    db,
    dialect: 'sqlite',
    async ping() {
      sqlite.prepare('select 1').get();
    },
    lines: { reads: readLine, writes: queue },
    connections: separate ? 2 : 1,
    replicas: null,
    async close() {
      // The thread's connection first: the writer's, closed last, then checkpoints what is left.
      await checkpointer?.stop();
      if (separate) await db.destroy();
      await writer.destroy();
    },
  };
}

export function connect(url: string, options: ConnectOptions = {}): Database {
  const { dialect, location } = parseDatabaseUrl(url);
  if (dialect === 'sqlite') {
    if ((options.replicas?.urls.length ?? 0) > 0) throw new Error('Read replicas need a PostgreSQL DATABASE_URL; SQLite has none');
    return connectSqlite(location, options);
  }
  // Write transactions have connections of their own (transaction() in db/dialect.ts takes
  // them), reads the rest: a write waits in one line, never behind reads for a connection, and a
  // flood of long batches leaves reads theirs.
  const poolSize = options.poolSize ?? 10;
  const writers = Math.max(1, Math.min(MAX_WRITERS, poolSize - READ_RESERVE));
  const reads = postgresPool(location, Math.max(1, poolSize - writers), options.maxQueueWaitMs);
  const writes = postgresPool(location, writers, options.maxQueueWaitMs);
  const db = reads.db;
  setWriteDatabase(db, writes.db);
  // Each replica: a pool as large as the primary's, all of it for reads.
  const standbys = (options.replicas?.urls ?? []).map((replicaUrl) => ({ url: replicaUrl, ...postgresPool(replicaUrl, poolSize, options.maxQueueWaitMs) }));
  for (const standby of standbys) setWriteDatabase(standby.db, writes.db);
  const replicas = options.replicas !== undefined && standbys.length > 0 ? new Replicas(location, standbys, options.replicas) : null;
  // Load shedding watches the longest wait of any line a read may stand in.
  const readLine: Line = { oldestWaitMs: () => Math.max(reads.queue.oldestWaitMs(), ...standbys.map((s) => s.queue.oldestWaitMs())) };
  return {
    db,
    dialect,
    async ping() {
      await reads.pool.query('select 1');
    },
    lines: { reads: standbys.length > 0 ? readLine : reads.queue, writes: writes.queue },
    connections: poolSize,
    replicas,
    async close() {
      await replicas?.close();
      await Promise.all([reads.db.destroy(), writes.db.destroy(), ...standbys.map((s) => s.db.destroy())]);
    },
  };
}
