import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import Sqlite from 'better-sqlite3';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createShop } from '../src/shops/repository.js';
import type { Benchmark } from './lib/benchmark.js';
import { MAIN, mb } from './lib/server.js';

// `npm run bench -- import [count]`: `loyalty import customers` of an NDJSON file of 1,000,000
// customers (or `count`) into a fresh SQLite database, as a user runs it (its own process, the
// CLI's default heap), beside the reference of the same rows inserted by better-sqlite3 alone
// into a database of the same schema: one prepared multi-row INSERT, 10,000 rows a transaction,
// no parsing, no validation, no programme. Targets: under 10 s, peak RSS under 300 MB.

const DEFAULT_COUNT = 1_000_000;
const ROWS_PER_STATEMENT = 500;
const ROWS_PER_TRANSACTION = 10_000;

const customer = (i: number) => ({
  remote_id: i,
  email: `customer${i}@example.com`,
  first_name: `Ada${i % 977}`,
  last_name: `Lovelace${i % 331}`,
  phone: null,
});

async function writeFile(file: string, count: number): Promise<void> {
  const out = fs.createWriteStream(file);
  for (let i = 1; i <= count; i += 1000) {
    let chunk = '';
    for (let k = i; k < Math.min(count + 1, i + 1000); k++) chunk += `${JSON.stringify(customer(k))}\n`;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await finished(out);
}

/** A fresh database with one shop: its URL. */
async function freshDatabase(dir: string, name: string): Promise<string> {
  const url = `sqlite:${path.join(dir, `${name}.db`)}`;
  const database = connect(url);
  try {
    await migrateToLatest(database.db);
    await createShop(database.db, { name: 'Import shop' }, Date.now());
  } finally {
    await database.close();
  }
  return url;
}

/** The CLI's import in its own process: seconds, and peak RSS sampled from /proc. */
async function cliImport(url: string, file: string, count: number): Promise<{ seconds: number; rss: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [MAIN, 'import', 'customers', file, '--shop', '1', '--json'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  let rss = 0;
  const sample = setInterval(() => {
    const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    rss = Math.max(rss, kb ? Number(kb[1]) * 1024 : 0);
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sample);
  const seconds = (performance.now() - started) / 1000;
  const { imported } = JSON.parse(stdout) as { imported: number };
  if (code !== 0 || imported !== count) throw new Error(`import exited ${code} with ${imported} of ${count} rows imported`);
  return { seconds, rss };
}

/** The same rows by better-sqlite3 alone, into the customers table of a migrated database. */
function rawInsert(url: string, count: number): number {
  const sqlite = new Sqlite(url.slice('sqlite:'.length));
  try {
    sqlite.pragma('journal_mode = WAL');
    const columns = ['shop_id', 'remote_id', 'email', 'first_name', 'last_name', 'phone', 'created_at', 'updated_at'];
    const row = `(${columns.map(() => '?').join(', ')})`;
    const insert = (rows: number) =>
      sqlite.prepare(`insert into customers (${columns.join(', ')}) values ${Array.from({ length: rows }, () => row).join(', ')}`);
    const full = insert(ROWS_PER_STATEMENT);
    const now = Date.now();
    const started = performance.now();
    for (let first = 1; first <= count; first += ROWS_PER_TRANSACTION) {
      const last = Math.min(count, first + ROWS_PER_TRANSACTION - 1);
      sqlite.transaction(() => {
        for (let i = first; i <= last; i += ROWS_PER_STATEMENT) {
          const params: unknown[] = [];
          for (let k = i; k <= Math.min(last, i + ROWS_PER_STATEMENT - 1); k++) {
            const c = customer(k);
            params.push(1, c.remote_id, c.email, c.first_name, c.last_name, c.phone, now, now);
          }
          (params.length === ROWS_PER_STATEMENT * columns.length ? full : insert(params.length / columns.length)).run(...params);
        }
      })();
    }
    return (performance.now() - started) / 1000;
  } finally {
    sqlite.close();
  }
}

export const imports: Benchmark = {
  description: 'loyalty import of 1,000,000 customers (SQLite) vs better-sqlite3 inserting the same rows [count]',
  async run(args) {
    const count = args[0] === undefined ? DEFAULT_COUNT : Number(args[0]);
    if (!Number.isInteger(count) || count < 1) throw new Error(`count must be a positive integer, got "${args[0]}"`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-bench-import-'));
    try {
      const file = path.join(dir, 'customers.ndjson');
      await writeFile(file, count);
      const raw = rawInsert(await freshDatabase(dir, 'raw'), count);
      const cli = await cliImport(await freshDatabase(dir, 'cli'), file, count);
      const f = (s: number) => `${s.toFixed(1).padStart(7)} s`;
      process.stdout.write(
        [
          `import of ${count.toLocaleString('en-US')} customers on sqlite (NDJSON, ${mb(fs.statSync(file).size)})`,
          `  loyalty import   ${f(cli.seconds)}   (target 10 s)  ${cli.seconds < 10 ? 'ok' : 'ABOVE TARGET'}`,
          `  raw INSERT       ${f(raw)}   (reference: better-sqlite3 alone, the same rows)`,
          `  ratio            ${(raw / cli.seconds).toFixed(2).padStart(9)}   (raw / import)`,
          `  peak RSS         ${mb(cli.rss).padStart(9)}   (target < 300 MB)  ${cli.rss < 300 * 1024 * 1024 ? 'ok' : 'ABOVE TARGET'}`,
          '',
        ].join('\n'),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
