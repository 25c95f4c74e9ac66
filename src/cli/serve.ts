import cluster from 'node:cluster';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import type { FastifyBaseLogger } from 'fastify';
import { loadConfig, parseWorkers, type Config } from '../config.js';
import { connect, parseDatabaseUrl } from '../db/connect.js';
import { allMigrations, migrateToLatest, pendingMigrations } from '../db/migrator.js';
import { transaction } from '../db/dialect.js';
import { systemClock } from '../clock.js';
import { countShops, createShop, createToken } from '../shops/repository.js';
import type { DB } from '../db/tables.js';
import { writeAuditEntry } from '../shops/audit.js';
import { output } from './context.js';

/** On an empty database, a demo shop and a token, so the first curl works. */
export async function bootstrap(db: DB, config: Config, log: Pick<FastifyBaseLogger, 'info'>): Promise<string | null> {
  if (!config.bootstrap || (await countShops(db)) > 0) return null;
  const now = systemClock();
  // The shop, its token and the token's audit entry together, or none of them.
  const { shop, token } = await transaction(db, async (trx) => {
    const shop = await createShop(trx, { name: 'Demo shop', points_expiry_days: 365 }, now);
    const { token, row } = await createToken(trx, shop.id, 'bootstrap', now);
    await writeAuditEntry(trx, {
      shopId: shop.id,
      occurredAt: now,
      actor: { type: 'system' },
      action: 'api_token.created',
      resource: 'api_token',
      resourceId: String(row.id),
      changes: { name: [null, row.name], scopes: [null, row.scopes] },
      requestId: null,
    });
    return { shop, token };
  });
  // Its programme, customers and a storefront key, for GET /storefront/demo.
  const { makeDemoStorefront } = await import('../storefront/demo.js');
  await makeDemoStorefront(db, config, shop.id, now);
  log.info({ shop_id: shop.id }, 'created a demo shop on the empty database');
  return token;
}

export function printWelcome(config: Config, port: number, token: string): void {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  process.stdout.write(
    [
      '',
      'Created a demo shop on the empty database. Its API token is shown only this once:',
      '',
      `  ${token}`,
      '',
      'Try it:',
      '',
      `  curl -H "Authorization: Bearer ${token}" ${base}/merchant_api/v1/shop`,
      '',
      ...(config.console ? [`Merchant console (signs in with the token): ${base}/console/#token=${token}`] : []),
      `API reference: ${base}/docs`,
      `Shopper's loyalty panel (demo customer): ${base}/storefront/demo`,
      '',
    ].join('\n'),
  );
}

/**
 * Requests a worker answers on one keep-alive connection before it closes it (the last answer
 * says `Connection: close`). The primary hands each new connection to a worker once, for good:
 * to whichever has acknowledged its last one first, so a client that opens its connections all
 * at once, and keeps them, may find them all on one worker while the other idles (20 of 20,
 * 17 of 20, seen under wrk). Closed after this many, connections are handed out again, in turn,
 * and a busier worker closes more of them: the workers' shares follow what each serves. A client
 * opens a connection again every few hundred requests, which costs far less than one of them.
 */
const WORKER_REQUESTS_PER_CONNECTION = 100;

/**
 * Serves in this process: alone (it migrates and bootstraps first), or as a worker of a cluster
 * whose primary did both before forking it (cli/cluster.ts).
 */
async function serveHere(config: Config, worker: boolean): Promise<void> {
  // Loaded here, not at the top, so the administrative commands start quickly.
  const [{ buildApp }, { startJobs, startStreamRelay }, { acceptMorePerTurn }] = await Promise.all([
    import('../app.js'),
    import('../jobs.js'),
    import('../http/accept.js'),
  ]);
  // The log is the app's once it is built; the checkpoint thread may fail before.
  let log: Pick<FastifyBaseLogger, 'warn'> | null = null;
  const database = connect(config.databaseUrl, {
    maxQueueWaitMs: config.loadShedding.maxQueueWaitMs,
    sqliteCacheMb: config.sqliteCacheMb,
    readConnection: true,
    backgroundCheckpoints: {
      onError: (err) => {
        const message = "the checkpoint thread stopped: SQLite checkpoints inside the writer's commits again";
        if (log === null) console.warn(message, err);
        else log.warn({ err }, message);
      },
    },
    replicas: config.replicas,
  });
  await database.replicas?.start();
  if (!worker) await migrateToLatest(database.db);
  const app = await buildApp(config, { database });
  log = app.log;
  if (worker) app.server.maxRequestsPerSocket = WORKER_REQUESTS_PER_CONNECTION;
  const token = worker ? null : await bootstrap(app.db, config, app.log);
  await app.listen({ host: config.host, port: config.port });
  const acceptingMore = acceptMorePerTurn(app.server, (err) =>
    app.log.warn({ err }, 'no more descriptors for the listening socket: it takes one new connection per turn of the event loop'),
  );
  if (token !== null) printWelcome(config, (app.server.address() as AddressInfo).port, token);
  const stopJobs = startJobs(app);
  const stopRelay = startStreamRelay(app);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: finishing in-flight requests');
    const timer = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    try {
      // No new connection from now on: the extra descriptors close here, the server's own in app.close().
      await acceptingMore.stop();
      await Promise.all([stopJobs(), stopRelay()]);
      await app.close();
      await database.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

export async function serve(config: Config): Promise<void> {
  if (config.workers === 1) return serveHere(config, false);
  if (cluster.isWorker) return serveHere(config, true);
  const { servePrimary } = await import('./cluster.js');
  return servePrimary(config);
}

/** Runs fn on the database of `url`, as it is (no migration), and closes it. */
async function opened<T>(url: string, fn: (db: DB) => Promise<T>): Promise<T> {
  const database = connect(url);
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

/** `loyalty migrate --dry-run`: what `migrate` would apply; it writes nothing, nor creates a database file. */
async function listPendingMigrations(json: boolean): Promise<void> {
  const { databaseUrl } = loadConfig();
  const { dialect, location } = parseDatabaseUrl(databaseUrl);
  let pending: string[];
  if (dialect === 'sqlite' && !fs.existsSync(location)) pending = allMigrations();
  else pending = await opened(databaseUrl, pendingMigrations);
  output(json, { pending }, () =>
    pending.length === 0
      ? 'Database is up to date: no pending migrations.'
      : [`${pending.length} pending migration(s), applied in this order by loyalty migrate or loyalty serve:`, ...pending.map((name) => `  ${name}`)].join(
          '\n',
        ),
  );
}

export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('Migrate the database, then serve the API (and run background jobs)')
    .option('--workers <n|auto>', 'processes that serve on the port, auto for one per core (default: WORKERS, else 1)')
    .action(async (options: { workers?: string }) =>
      serve(loadConfig(process.env, options.workers === undefined ? {} : { workers: parseWorkers(options.workers, '--workers') })),
    );

  program
    .command('migrate')
    .description('Bring the database schema up to date')
    .option('--dry-run', 'list the pending migrations and apply none')
    .option('--json', 'print the result as JSON')
    .action(async (options: { dryRun?: boolean; json?: boolean }) => {
      if (options.dryRun) return listPendingMigrations(options.json === true);
      const applied = await opened(loadConfig().databaseUrl, migrateToLatest);
      output(options.json === true, { applied }, () =>
        applied.length === 0 ? 'Database is up to date.' : `Applied ${applied.join(', ')}. Database is up to date.`,
      );
    });
}
