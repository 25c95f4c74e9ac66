import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Database } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { createShop, createToken, type Shop } from '../../src/shops/repository.js';

// Scratch databases for the benchmarks: a fresh SQLite file, or a fresh database on the
// PostgreSQL at 127.0.0.1:5432, dropped afterwards.

export const PG_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface Scratch {
  url: string;
  drop(): Promise<void>;
}

export async function scratchDatabase(dialect: 'sqlite' | 'postgres', name: string): Promise<Scratch> {
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `loyalty-bench-${name}-`));
    return { url: `sqlite:${path.join(dir, 'bench.db')}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  const database = `loyalty_bench_${name}_${process.pid}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists ${database} with (force)`);
  await admin(`create database ${database}`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${database}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${database} with (force)`) };
}

/** Customers 1…count with e-mails customer<N>@example.com, written straight into the table. */
export async function seedCustomers(database: Database, shopId: number, count: number, now: number): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => ({
    shop_id: shopId,
    remote_id: i + 1,
    email: `customer${i + 1}@example.com`,
    first_name: null,
    last_name: null,
    phone: null,
    birthday: null,
    created_at: now,
    updated_at: now,
  }));
  for (let i = 0; i < rows.length; i += 1000)
    await database.db
      .insertInto('customers')
      .values(rows.slice(i, i + 1000))
      .execute();
}

/** Migrates the database, then makes a shop with a token and `customers` customers. */
export async function benchShop(database: Database, customers: number, now: number): Promise<{ shop: Shop; token: string }> {
  await migrateToLatest(database.db);
  const shop = await createShop(database.db, { name: 'Bench shop' }, now);
  const { token } = await createToken(database.db, shop.id, 'bench', now);
  await seedCustomers(database, shop.id, customers, now);
  return { shop, token };
}
