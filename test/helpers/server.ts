import fs from 'node:fs';
import { afterEach } from 'vitest';
import { MAIN, startServer, type ServerProcess } from '../../bench/lib/server.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createShop, createToken } from '../../src/shops/repository.js';
import { createTestDatabase, type TestDatabase } from './database.js';

// `loyalty serve` as a real process, for what app.inject cannot show: sockets, timeouts, Node's
// own parser, memory and load. Servers and databases made here are gone after each test.

const started: ServerProcess[] = [];
const databases: TestDatabase[] = [];

afterEach(async () => {
  for (const server of started.splice(0)) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  for (const db of databases.splice(0)) await db.drop();
});

export async function start(...args: Parameters<typeof startServer>): Promise<ServerProcess> {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build (npm test does it)`);
  const server = await startServer(...args);
  started.push(server);
  return server;
}

export async function freshDatabase(): Promise<string> {
  const db = await createTestDatabase();
  databases.push(db);
  return db.url;
}

/** A migrated database with one shop; returns its token. */
export async function seedShop(url: string): Promise<string> {
  const database = connect(url);
  try {
    await migrateToLatest(database.db);
    const shop = await createShop(database.db, { name: 'Seeded' }, Date.now());
    return (await createToken(database.db, shop.id, 'test', Date.now())).token;
  } finally {
    await database.close();
  }
}

/** A server on a fresh database with one shop. */
export async function startWithShop(env: Record<string, string> = {}): Promise<{ server: ServerProcess; token: string; url: string }> {
  const url = await freshDatabase();
  const token = await seedShop(url);
  return { server: await start(url, env, { capture: true }), token, url };
}
