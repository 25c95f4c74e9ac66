import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { MAIN } from '../../bench/lib/server.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { connect, type Database } from '../../src/db/connect.js';
import { createShop, createToken, type Shop } from '../../src/shops/repository.js';
import { API } from './app.js';
import { createTestDatabase } from './database.js';

// The `loyalty` command as a user runs it: the compiled CLI in a child process (stdout is a
// pipe, not a terminal) on a test database, and the app on the same database to check the
// outcome over HTTP. `npm test` builds the CLI first.

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliShop {
  shop: Shop;
  token: string;
}

export interface CliContext {
  url: string;
  app: FastifyInstance;
  database: Database;
  /** A scratch directory for input files, removed on close. */
  dir: string;
  run(...args: string[]): Promise<CliResult>;
  /** Runs the command and returns its stdout; throws when it exits non-zero. */
  ok(...args: string[]): Promise<string>;
  /** A new shop and its token, made by the repository (`loyalty shops create` has tests of its own). */
  createShop(name?: string): Promise<CliShop>;
  /** Writes a scratch file and returns its path. */
  write(name: string, content: string | Buffer): string;
  /** A GET over HTTP with the shop's token. */
  get(token: string, pathAndQuery: string): Promise<{ status: number; body: any }>;
  /** Every record of a list endpoint, walked with cursor pagination. */
  all(token: string, listPath: string): Promise<any[]>;
  close(): Promise<void>;
}

export async function cliContext(): Promise<CliContext> {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build (npm test does it)`);
  const testDb = await createTestDatabase();
  const url = testDb.url;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-cli-'));

  const run = (...args: string[]) =>
    new Promise<CliResult>((resolve) => {
      execFile(
        process.execPath,
        [MAIN, ...args],
        { env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' }, maxBuffer: 64 << 20 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
    });
  const ok = async (...args: string[]) => {
    const result = await run(...args);
    if (result.code !== 0) throw new Error(`loyalty ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    return result.stdout;
  };

  // The CLI migrates on first use; the app opens the same database afterwards.
  await ok('migrate');
  const database = connect(url);
  // No shedding: the CLI tests run beside others on a loaded machine; overload has tests of its own.
  const app = await buildApp(
    loadConfig({ LOG_LEVEL: 'silent', MAX_EVENT_LOOP_DELAY_MS: '0' }, { databaseUrl: url, bootstrap: false, expirySweepIntervalMs: 0 }),
    { database },
  );

  const get = async (token: string, pathAndQuery: string) => {
    const res = await app.inject({ method: 'GET', url: `${API}/${pathAndQuery}`, headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json() };
  };

  return {
    url,
    app,
    database,
    dir,
    run,
    ok,
    async createShop(name = 'CLI shop') {
      const shop = await createShop(database.db, { name }, Date.now());
      const { token } = await createToken(database.db, shop.id, 'test', Date.now());
      return { shop, token };
    },
    write(name, content) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, content);
      return file;
    },
    get,
    async all(token, listPath) {
      const out: any[] = [];
      let since = 0;
      for (;;) {
        const sep = listPath.includes('?') ? '&' : '?';
        const { status, body } = await get(token, `${listPath}${sep}pagination[since_id]=${since}&pagination[limit]=250`);
        if (status !== 200) throw new Error(`GET ${listPath} answered ${status}: ${JSON.stringify(body)}`);
        out.push(...body.data);
        if (body.links.next_since_id === null) return out;
        since = body.links.next_since_id;
      }
    },
    async close() {
      await app.close();
      await database.close();
      await testDb.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
