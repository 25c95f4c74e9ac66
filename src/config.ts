// The only reader of process.env. Everything else receives a frozen Config.

import os from 'node:os';

export interface Config {
  readonly databaseUrl: string;
  readonly host: string;
  readonly port: number;
  readonly logLevel: string;
  /** Public base URL used in absolute pagination links; derived from the request when unset. */
  readonly publicUrl: string | null;
  readonly trustProxy: boolean;
  readonly bodyLimitBytes: number;
  readonly batchMaxEvents: number;
  readonly rateLimit: {
    readonly max: number;
    readonly windowMs: number;
    readonly redisUrl: string | null;
  };
  readonly loadShedding: {
    /** Shed while the event loop lags more than this (0: never on lag). */
    readonly maxEventLoopDelayMs: number;
    readonly retryAfterSeconds: number;
    /** Requests being handled at once; more are shed. */
    readonly maxRequestsInFlight: number;
    /** Declared body bytes of the requests being handled at once; more are shed. */
    readonly maxBodyBytesInFlight: number;
    /** Longest wait for a database connection: new requests are shed once the oldest waiter has waited half of it, and a waiter that reaches it gives up with 503. */
    readonly maxQueueWaitMs: number;
  };
  readonly timeouts: {
    /** To receive a request's headers. */
    readonly headersMs: number;
    /** To receive a whole request, headers and body. */
    readonly requestMs: number;
    /** An idle keep-alive connection is closed after this. */
    readonly keepAliveMs: number;
  };
  /** Open connections; a connection beyond it is closed at once. */
  readonly maxConnections: number;
  /** The server's SQLite page cache, in MB (most of what it holds beyond the JS heap). */
  readonly sqliteCacheMb: number;
  /** Failed authentications (unknown or revoked tokens) per client address and window, before 429. */
  readonly authFailures: {
    readonly max: number;
    readonly windowMs: number;
  };
  /** Storefront API requests per customer and per client address, and their window (per process). */
  readonly storefront: {
    readonly customerMax: number;
    readonly addressMax: number;
    readonly windowMs: number;
  };
  readonly idempotencyTtlHours: number;
  /** Audit log entries are kept this long (docs/access.md). */
  readonly auditRetentionDays: number;
  readonly expirySweepIntervalMs: number;
  readonly webhooks: {
    /** How often due deliveries are sent; 0 turns delivery off in this process. */
    readonly deliveryIntervalMs: number;
    readonly timeoutMs: number;
    /** Deliveries sent concurrently. */
    readonly batchSize: number;
    /** Delivered and failed deliveries are kept this long. */
    readonly retentionDays: number;
    /** Webhook URLs may name, and deliveries go to, private, loopback and other non-public addresses (never in a multi-merchant deployment). */
    readonly allowPrivateUrls: boolean;
  };
  /** The event stream (DESIGN 18, docs/scaling.md); null url: off. */
  readonly eventStream: {
    /** `nats://host:4222` (comma-separated for several servers), EVENT_STREAM_URL. */
    readonly url: string | null;
    /** How often an idle relay looks for new events. */
    readonly pollMs: number;
    /** How long a relay's claim on events lasts before another process may take them over. */
    readonly leaseMs: number;
  };
  /** PostgreSQL read replicas (DESIGN 18, docs/scaling.md); no urls: every read on DATABASE_URL. */
  readonly replicas: {
    /** Hot standbys of DATABASE_URL's cluster, DATABASE_REPLICA_URLS (comma-separated). */
    readonly urls: readonly string[];
    /** How long a read waits for a replica to replay past the write it must see, before it reads the primary. */
    readonly waitMs: number;
    /** A replica further behind than this is left out until it catches up. */
    readonly maxLagMs: number;
  };
  /** Store connections (docs/connections.md): the bodies of their deliveries are kept this long. */
  readonly connectionRetentionDays: number;
  readonly shutdownTimeoutMs: number;
  readonly bootstrap: boolean;
  /** Processes that serve on the port (node:cluster); 1 serves in this process alone. */
  readonly workers: number;
  /** A worker that has not listened this long after it was started is taken as failed: the server stops. */
  readonly workerStartTimeoutMs: number;
  /** Serve the merchant console at /console. */
  readonly console: boolean;
}

export class ConfigError extends Error {}

/** Where people reach this server: PUBLIC_URL, else HOST and PORT (a wildcard host is this machine). */
export function serverUrl(config: Config): string {
  if (config.publicUrl !== null) return config.publicUrl;
  const host = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function str(env: Env, name: string): string | null {
  const raw = env[name]?.trim();
  return raw === undefined || raw === '' ? null : raw;
}

function eventStream(env: Env): Config['eventStream'] {
  const url = str(env, 'EVENT_STREAM_URL');
  if (url !== null && !url.split(',').every((u) => /^(nats|tls):\/\/[^\s/]+\/?$/.test(u.trim())))
    throw new ConfigError(`EVENT_STREAM_URL must be nats://host:port (comma-separated for several servers), got "${url}"`);
  return { url, pollMs: int(env, 'EVENT_STREAM_POLL_MS', 100, 5, 60_000), leaseMs: int(env, 'EVENT_STREAM_LEASE_MS', 15_000, 1000, 3_600_000) };
}

function replicas(env: Env, databaseUrl: string): Config['replicas'] {
  const urls = (str(env, 'DATABASE_REPLICA_URLS') ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  const wrong = urls.find((u) => !/^postgres(ql)?:\/\/\S+$/.test(u));
  if (wrong !== undefined) throw new ConfigError(`DATABASE_REPLICA_URLS must be postgres:// URLs (comma-separated), got "${wrong}"`);
  if (urls.length > 0 && databaseUrl.startsWith('sqlite:'))
    throw new ConfigError('DATABASE_REPLICA_URLS needs a PostgreSQL DATABASE_URL: SQLite has no replicas');
  return { urls, waitMs: int(env, 'REPLICA_WAIT_MS', 200, 0, 60_000), maxLagMs: int(env, 'REPLICA_MAX_LAG_MS', 5000, 1, 3_600_000) };
}

function timeouts(env: Env): Config['timeouts'] {
  const requestMs = int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100);
  // Node refuses a headers timeout longer than the request timeout.
  const headersMs = int(env, 'HEADERS_TIMEOUT_MS', Math.min(10_000, requestMs), 100, requestMs);
  return { headersMs, requestMs, keepAliveMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 100) };
}

/** A count of server processes: a whole number from 1 to 64, or `auto` for one per core. */
export function parseWorkers(raw: string, name = 'WORKERS'): number {
  const value = raw.trim().toLowerCase();
  if (value === 'auto') return os.availableParallelism();
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 64)
    throw new ConfigError(`${name} must be a number of processes from 1 to 64, or auto; got "${raw}"`);
  return Number(value);
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/loyalty.db';

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const publicUrl = str(env, 'PUBLIC_URL');
  const databaseUrl = str(env, 'DATABASE_URL') ?? DEFAULT_DATABASE_URL;
  const config: Config = {
    databaseUrl,
    host: str(env, 'HOST') ?? '0.0.0.0',
    port: int(env, 'PORT', 3000, 0, 65535),
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    publicUrl: publicUrl === null ? null : publicUrl.replace(/\/+$/, ''),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 2 * 1024 * 1024, 1024),
    batchMaxEvents: int(env, 'BATCH_MAX_EVENTS', 1000, 1, 100_000),
    rateLimit: {
      max: int(env, 'RATE_LIMIT_MAX', 6000, 1),
      windowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000),
      redisUrl: str(env, 'REDIS_URL'),
    },
    loadShedding: {
      maxEventLoopDelayMs: int(env, 'MAX_EVENT_LOOP_DELAY_MS', 200, 0),
      retryAfterSeconds: int(env, 'OVERLOAD_RETRY_AFTER_SECONDS', 1, 1),
      maxRequestsInFlight: int(env, 'MAX_REQUESTS_IN_FLIGHT', 1000, 1),
      maxBodyBytesInFlight: int(env, 'MAX_BODY_BYTES_IN_FLIGHT', 2 * 1024 * 1024, 1024),
      maxQueueWaitMs: int(env, 'MAX_QUEUE_WAIT_MS', 1000, 10),
    },
    timeouts: timeouts(env),
    maxConnections: int(env, 'MAX_CONNECTIONS', 2000, 1),
    sqliteCacheMb: int(env, 'SQLITE_CACHE_MB', 16, 1, 4096),
    authFailures: {
      max: int(env, 'AUTH_FAILURES_MAX', 100, 1),
      windowMs: int(env, 'AUTH_FAILURES_WINDOW_MS', 60_000, 1000),
    },
    storefront: {
      customerMax: int(env, 'STOREFRONT_RATE_LIMIT_CUSTOMER_MAX', 600, 1),
      addressMax: int(env, 'STOREFRONT_RATE_LIMIT_ADDRESS_MAX', 3000, 1),
      windowMs: int(env, 'STOREFRONT_RATE_LIMIT_WINDOW_MS', 60_000, 1000),
    },
    idempotencyTtlHours: int(env, 'IDEMPOTENCY_TTL_HOURS', 24, 1),
    auditRetentionDays: int(env, 'AUDIT_RETENTION_DAYS', 365, 1),
    expirySweepIntervalMs: int(env, 'EXPIRY_SWEEP_INTERVAL_MS', 60_000, 0),
    webhooks: {
      deliveryIntervalMs: int(env, 'WEBHOOK_DELIVERY_INTERVAL_MS', 5_000, 0),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
      batchSize: int(env, 'WEBHOOK_BATCH_SIZE', 20, 1, 1000),
      retentionDays: int(env, 'WEBHOOK_RETENTION_DAYS', 30, 1),
      allowPrivateUrls: bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', false),
    },
    eventStream: eventStream(env),
    replicas: replicas(env, databaseUrl),
    connectionRetentionDays: int(env, 'CONNECTION_RETENTION_DAYS', 30, 1),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    bootstrap: bool(env, 'LOYALTY_BOOTSTRAP', true),
    workers: parseWorkers(str(env, 'WORKERS') ?? '1'),
    workerStartTimeoutMs: int(env, 'WORKER_START_TIMEOUT_MS', 60_000, 100),
    console: bool(env, 'CONSOLE', true),
    ...overrides,
  };
  return Object.freeze(config);
}
