import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { drawBulkReferralCodes, firstBirthdays } from '../src/earning/customers.js';
import { createShop } from '../src/shops/repository.js';
import type { Benchmark } from './lib/benchmark.js';
import { benchCustomer, writeCustomers } from './lib/customers.js';
import { MAIN, mb } from './lib/server.js';

// `npm run bench -- import [count] [other-main.js]`: `loyalty import customers` of an NDJSON
// file of 1,000,000 customers (or `count`; the rows bench/lists.ts imports) into a fresh SQLite
// database, as a user runs it (its own process, the CLI's default heap), beside two references
// of the same rows inserted by better-sqlite3 alone into a database of the same schema: one
// prepared multi-row INSERT, the import's rows a statement and a transaction, the same columns
// (referral codes drawn as the import draws them, first birthday grants), no parsing, no
// validation, no programme. With all the customers' indexes, that is SQLite's own floor for
// these rows on this machine; with none but the primary key, what the indexes cost. What the
// import takes above the first is our code's. `other-main.js`: another build's CLI (dist/src/
// main.js of a worktree), timed in the same run, before and after ours.
// Targets: under 10 s, peak RSS under 300 MB.

const DEFAULT_COUNT = 1_000_000;
/** As records/import.ts BATCH and db/dialect.ts MAX_SQLITE_PARAMETERS write them. */
const ROWS_PER_TRANSACTION = 10_000;
const MAX_PARAMETERS = 30_000;
/** As db/dialect.ts bulkWrite sets it for an import. */
const CACHE_MB = 32;

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

interface Timing {
  seconds: number;
  /** CPU seconds, user and system, of every thread. */
  cpu: number;
}

/** CPU seconds of this process's children that have ended (cutime + cstime of /proc/self/stat). */
function childrenCpu(): number {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // Fields 16 and 17 of stat(5), counted from the state (field 3) here, in clock ticks of 1/100 s.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** The CLI's import in its own process: seconds, CPU and peak RSS sampled from /proc. */
async function cliImport(main: string, url: string, file: string, count: number): Promise<Timing & { rss: number }> {
  const cpuBefore = childrenCpu();
  const started = performance.now();
  const child = spawn(process.execPath, [main, 'import', 'customers', file, '--shop', '1', '--json'], {
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  let rss = 0;
  const sample = setInterval(() => {
    try {
      const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      rss = Math.max(rss, kb ? Number(kb[1]) * 1024 : 0);
    } catch {
      // The process just ended.
    }
  }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sample);
  const seconds = (performance.now() - started) / 1000;
  const { imported } = JSON.parse(stdout) as { imported: number };
  if (code !== 0 || imported !== count) throw new Error(`import exited ${code} with ${imported} of ${count} rows imported`);
  return { seconds, cpu: childrenCpu() - cpuBefore, rss };
}

const COLUMNS = [
  'shop_id',
  'remote_id',
  'email',
  'first_name',
  'last_name',
  'phone',
  'birthday',
  'created_at',
  'updated_at',
  'referral_code',
  'birthday_next_at',
];

/**
 * The same rows by better-sqlite3 alone into the customers table of a migrated database (with
 * its indexes, or with none but the primary key), with the import's settings: WAL, synchronous
 * NORMAL, its page cache, its rows a transaction, as many a statement as its parameters allow,
 * and the checkpoint that ends it.
 */
function rawInsert(url: string, count: number, indexes: boolean): Timing {
  const sqlite = new Sqlite(url.slice('sqlite:'.length));
  try {
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma(`cache_size = -${CACHE_MB * 1024}`);
    if (!indexes) {
      const names = sqlite.prepare("select name from sqlite_master where type = 'index' and tbl_name = 'customers' and sql is not null").pluck().all();
      for (const name of names) sqlite.exec(`drop index "${String(name)}"`);
    }
    const row = `(${COLUMNS.map(() => '?').join(', ')})`;
    const insert = (rows: number) =>
      sqlite.prepare(`insert into customers (${COLUMNS.join(', ')}) values ${Array.from({ length: rows }, () => row).join(', ')}`);
    const perStatement = Math.floor(MAX_PARAMETERS / COLUMNS.length);
    const full = insert(perStatement);
    const now = Date.now();
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let first = 1; first <= count; first += ROWS_PER_TRANSACTION) {
      const last = Math.min(count, first + ROWS_PER_TRANSACTION - 1);
      const customers = Array.from({ length: last - first + 1 }, (_, k) => benchCustomer(first + k));
      const codes = drawBulkReferralCodes(customers.length);
      const birthdays = firstBirthdays(customers as unknown as Record<string, unknown>[], now);
      sqlite.transaction(() => {
        for (let i = 0; i < customers.length; i += perStatement) {
          const params: unknown[] = [];
          for (let k = i; k < Math.min(customers.length, i + perStatement); k++) {
            const c = customers[k]!;
            params.push(1, c.remote_id, c.email, c.first_name, c.last_name, c.phone, c.birthday, now, now, codes[k], birthdays[k]);
          }
          (params.length === perStatement * COLUMNS.length ? full : insert(params.length / COLUMNS.length)).run(...params);
        }
      })();
    }
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    const used = process.cpuUsage(cpu);
    return { seconds: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6 };
  } finally {
    sqlite.close();
  }
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export const imports: Benchmark = {
  description: 'loyalty import of 1,000,000 customers (SQLite) vs better-sqlite3 inserting the same rows [count] [other-main.js]',
  async run(args) {
    const count = args[0] === undefined ? DEFAULT_COUNT : Number(args[0]);
    if (!Number.isInteger(count) || count < 1) throw new Error(`count must be a positive integer, got "${args[0]}"`);
    const other = args[1];
    if (other !== undefined && !fs.existsSync(other)) throw new Error(`no such CLI: ${other}`);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-bench-import-'));
    try {
      const file = path.join(dir, 'customers.ndjson');
      await writeCustomers(file, count);
      const databases = await Promise.all(['cli', 'raw', 'bare', 'other', 'cli2', 'other2'].map((name) => freshDatabase(dir, name)));
      const [cliUrl, rawUrl, bareUrl, otherUrl, cli2Url, other2Url] = databases as [string, string, string, string, string, string];
      process.stdout.write(`import of ${count.toLocaleString('en-US')} customers on sqlite (NDJSON, ${mb(fs.statSync(file).size)}); load average ${load()}\n`);
      const f = (t: Timing) => `${t.seconds.toFixed(1).padStart(6)} s   CPU ${t.cpu.toFixed(1).padStart(6)} s`;
      const line = (name: string, t: Timing, note = '') => process.stdout.write(`  ${name.padEnd(36)} ${f(t)}${note}\n`);
      const imported = (t: Timing & { rss: number }) =>
        `   peak RSS ${mb(t.rss)} (target < 300 MB)   ${t.seconds < 10 && t.rss < 300 * 1024 * 1024 ? 'ok' : 'ABOVE TARGET'}`;
      // Ours, the references, then ours again (and the other build's, alternating): the machine drifts.
      const cli = await cliImport(MAIN, cliUrl, file, count);
      line('loyalty import', cli, imported(cli));
      if (other !== undefined) {
        const before = await cliImport(other, otherUrl, file, count);
        line(`  other build (${path.basename(path.dirname(path.dirname(path.dirname(other))))})`, before, imported(before));
      }
      const raw = rawInsert(rawUrl, count, true);
      line('raw INSERT, all indexes', raw, '   SQLite’s floor for these rows');
      const bare = rawInsert(bareUrl, count, false);
      line('raw INSERT, primary key only', bare, '   what the secondary indexes cost: the difference');
      const cli2 = await cliImport(MAIN, cli2Url, file, count);
      line('loyalty import, again', cli2, imported(cli2));
      if (other !== undefined) {
        const before = await cliImport(other, other2Url, file, count);
        line('  other build, again', before, imported(before));
      }
      const best = cli.seconds < cli2.seconds ? cli : cli2;
      process.stdout.write(
        `  above the floor: ${(best.seconds - raw.seconds).toFixed(1)} s, CPU ${(best.cpu - raw.cpu).toFixed(1)} s (import ÷ raw: ${(best.seconds / raw.seconds).toFixed(2)} wall); load average ${load()}\n`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
