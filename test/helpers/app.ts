import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { connect, type Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createShop, createToken, type Shop, type ShopSettings } from '../../src/shops/repository.js';
import type { WebhookTransport } from '../../src/webhooks/delivery.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { DAY_MS } from '../../src/clock.js';

export const API = '/merchant_api/v1';

/** A clock the test moves by hand. */
export class TestClock {
  constructor(public now: number = Date.UTC(2026, 0, 15, 12, 0, 0)) {}
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export const DAY = DAY_MS;

export interface TestShop {
  shop: Shop;
  token: string;
}

export interface RequestOptions {
  body?: unknown;
  token?: string | null;
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

export interface TestContext extends TestShop {
  app: FastifyInstance;
  database: Database;
  url: string;
  clock: TestClock;
  config: Config;
  /** Another shop with its own token. */
  createShop(settings?: Partial<ShopSettings>): Promise<TestShop>;
  /** An authenticated request (the context's shop unless `token` says otherwise). */
  request(method: InjectOptions['method'], path: string, options?: RequestOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export interface SetupOptions {
  config?: Partial<Config>;
  shop?: Partial<ShopSettings>;
  now?: number;
  /** Where the app's JSON log lines go (set config.logLevel too; tests default to silent). */
  logStream?: NodeJS.WritableStream;
  /** Sends webhook deliveries instead of fetch. */
  webhookTransport?: WebhookTransport;
}

/** Builds the app exactly as `loyalty serve` does, on a database of its own. */
export async function setup(options: SetupOptions = {}): Promise<TestContext> {
  const testDb: TestDatabase = await createTestDatabase();
  const clock = new TestClock(options.now);
  // Many tests send unknown tokens from the one address of app.inject; the limit has tests of its own.
  const config = loadConfig(
    { LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0', AUTH_FAILURES_MAX: '1000000' },
    {
      databaseUrl: testDb.url,
      bootstrap: false,
      expirySweepIntervalMs: 0,
      ...options.config,
    },
  );
  // As `loyalty serve` connects (cli/serve.ts): on SQLite, reads through a connection of their own.
  const database = connect(testDb.url, { readConnection: true });
  await migrateToLatest(database.db);
  const app = await buildApp(config, {
    database,
    clock: clock.read,
    ...(options.logStream ? { logStream: options.logStream } : {}),
    ...(options.webhookTransport ? { webhookTransport: options.webhookTransport } : {}),
  });

  const makeShop = async (settings: Partial<ShopSettings> = {}): Promise<TestShop> => {
    const shop = await createShop(database.db, { name: 'Test shop', ...settings }, clock.now);
    const { token } = await createToken(database.db, shop.id, 'test', clock.now);
    return { shop, token };
  };
  const main = await makeShop(options.shop);

  return {
    ...main,
    app,
    database,
    url: testDb.url,
    clock,
    config,
    createShop: makeShop,
    request(method, path, { body, token, headers, query } = {}) {
      const allHeaders: Record<string, string> = { ...headers };
      const auth = token === undefined ? main.token : token;
      if (auth !== null) allHeaders.authorization = `Bearer ${auth}`;
      return app.inject({
        method,
        url: path.startsWith('/') ? path : `${API}/${path}`,
        headers: allHeaders,
        ...(query ? { query } : {}),
        ...(body !== undefined ? { payload: body as object } : {}),
      });
    },
    async close() {
      await app.close();
      await database.close();
      await testDb.drop();
    },
  };
}

/** Asserts the documented error shape and returns the error. */
export function errorOf(response: LightMyRequestResponse): {
  type: string;
  code: string;
  message: string;
  request_id: string;
  details?: { param: string; code: string; message: string }[];
} {
  const body = response.json();
  if (!body || typeof body.error !== 'object') throw new Error(`expected an error body, got ${response.body}`);
  return body.error;
}
