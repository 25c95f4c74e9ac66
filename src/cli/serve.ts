import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../config.js';
import { connect } from '../db/connect.js';
import { migrateToLatest } from '../db/migrator.js';
import { countShops, createShop, createToken } from '../shops/repository.js';
import { withDatabase } from './context.js';

/** On an empty database, a demo shop and a token, so the first curl works. */
async function bootstrap(app: FastifyInstance, config: Config): Promise<string | null> {
  if (!config.bootstrap || (await countShops(app.db)) > 0) return null;
  const now = app.clock();
  const shop = await createShop(app.db, { name: 'Demo shop', points_expiry_days: 365 }, now);
  const { token } = await createToken(app.db, shop.id, 'bootstrap', now);
  // Its programme, customers and a storefront key, for GET /storefront/demo.
  const { makeDemoStorefront } = await import('../storefront/demo.js');
  await makeDemoStorefront(app.db, config, shop.id, now);
  app.log.info({ shop_id: shop.id }, 'created a demo shop on the empty database');
  return token;
}

function printWelcome(app: FastifyInstance, config: Config, token: string): void {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const { port } = app.server.address() as AddressInfo;
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
      `API reference: ${base}/docs`,
      `Shopper's loyalty panel (demo customer): ${base}/storefront/demo`,
      '',
    ].join('\n'),
  );
}

export async function serve(config: Config): Promise<void> {
  // Loaded here, not at the top, so the administrative commands start quickly.
  const [{ buildApp }, { startJobs }] = await Promise.all([import('../app.js'), import('../jobs.js')]);
  const database = connect(config.databaseUrl, { maxQueueWaitMs: config.loadShedding.maxQueueWaitMs });
  await migrateToLatest(database.db);
  const app = await buildApp(config, { database });
  const token = await bootstrap(app, config);
  await app.listen({ host: config.host, port: config.port });
  if (token !== null) printWelcome(app, config, token);
  const stopJobs = startJobs(app);

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
      await stopJobs();
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

export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('Migrate the database, then serve the API (and run background jobs)')
    .action(async () => serve(loadConfig()));

  program
    .command('migrate')
    .description('Bring the database schema up to date')
    .action(async () => {
      await withDatabase(async () => {
        process.stdout.write('Database is up to date.\n');
      });
    });
}
