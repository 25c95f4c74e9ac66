import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

// Each test file gets a database of its own: a fresh SQLite file, or, when TEST_DATABASE_URL
// names a PostgreSQL server, a fresh database created on it and dropped afterwards.

export const TEST_DIALECT = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `loyalty_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const base = process.env.TEST_DATABASE_URL;
  if (base) {
    await admin((c) => c.query(`create database ${name}`));
    const url = new URL(base);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      drop: () => admin((c) => c.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-test-'));
  return {
    url: `sqlite:${path.join(dir, `${name}.db`)}`,
    drop: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
