import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { connect, parseDatabaseUrl } from '../src/db/connect.js';
import type { Benchmark } from './index.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { MAIN, startServer } from './lib/server.js';
import { wrk, wrkAvailable, type WrkResult } from './lib/wrk.js';

// `npm run bench -- workers [sqlite|postgres]`:
// 1. Cursor pages with wrk against `loyalty serve --workers 2` and against one process, in the
//    same run, on SQLite and on PostgreSQL (target: 2 workers ≥ 1.4× one on this 2-core machine,
//    which wrk shares).
// 2. On SQLite, writes (PUT /customers) while `loyalty backup` copies a 1 GB database, against
//    the same writes without a backup (target: p99 at most 2×).

const CUSTOMERS = 100_000;
const SECONDS = 10;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 20;
const ROUNDS = 2;
const BACKUP_BYTES = 1 << 30;
const WRITE_CONNECTIONS = 4;

const LIST = '/merchant_api/v1/customers';
const cursorPage = `"${LIST}?pagination[since_id]=" .. math.random(0, ${CUSTOMERS}) .. "&pagination[limit]=25"`;
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const line = (name: string, r: WrkResult, extra = '') =>
  `  ${name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(7)} ms   p99 ${r.p99Ms.toFixed(2).padStart(7)} ms${r.non2xx ? `   NON-2XX ${r.non2xx}` : ''}${extra}`;

async function pagesWithWorkers(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const scratch = await scratchDatabase(dialect, 'workers');
  try {
    const database = connect(scratch.url);
    const { token } = await benchShop(database, CUSTOMERS, Date.now());
    await database.close();
    // Both servers run at once and are measured in turn, twice: load from outside the benchmark
    // (the machine is shared) then weighs on both alike, and the better run of each is compared.
    const one = await startServer(scratch.url, { WORKERS: '1' });
    const two = await startServer(scratch.url, { WORKERS: '2' });
    try {
      process.stdout.write(
        `\n${dialect}: cursor pages of 25 over ${CUSTOMERS} customers, ${CONNECTIONS} connections, ${SECONDS} s after ${WARMUP_SECONDS} s of warm-up, each server twice in turn; load average ${load()}\n`,
      );
      const best = { one: null as WrkResult | null, two: null as WrkResult | null };
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [name, server] of [
          ['one', one],
          ['two', two],
        ] as const) {
          const result = await wrk(server.url, token, cursorPage, SECONDS, CONNECTIONS, { warmupSeconds: WARMUP_SECONDS });
          process.stdout.write(`${line(name === 'one' ? 'one process' : '--workers 2', result)}\n`);
          if (best[name] === null || result.rps > best[name].rps) best[name] = result;
        }
      }
      process.stdout.write(
        `  best of each: ${best.one!.rps.toFixed(0)} against ${best.two!.rps.toFixed(0)} req/s, ratio ${(best.two!.rps / best.one!.rps).toFixed(2)} (target ≥ 1.4); load average ${load()}\n`,
      );
    } finally {
      await Promise.all([one.stop(), two.stop()]);
    }
  } finally {
    await scratch.drop();
  }
}

/** Fills the shop's customers table until the database file holds `bytes`. */
function fillTo(file: string, bytes: number): number {
  const sqlite = new BetterSqlite3(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = OFF');
  const insert = sqlite.prepare(`
    with recursive n(i) as (select ? union all select i + 1 from n where i < ?)
    insert into customers (shop_id, remote_id, email, first_name, last_name, phone, birthday, created_at, updated_at)
    select 1, i, 'customer' || i || '@example.com', 'First' || (i % 997), 'Last' || (i % 991), '+1 555 ' || (i % 10000), '1990-01-0' || (1 + i % 9), 0, 0 from n`);
  let customers = CUSTOMERS;
  while (fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0) < bytes) {
    insert.run(customers + 1, customers + 250_000);
    customers += 250_000;
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  }
  sqlite.close();
  return customers;
}

function backup(databaseUrl: string, target: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'backup', target], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('exit', (code) => (code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`loyalty backup exited ${code}`))));
  });
}

async function writesDuringBackup(): Promise<void> {
  const scratch = await scratchDatabase('sqlite', 'backup');
  const dir = path.dirname(parseDatabaseUrl(scratch.url).location);
  try {
    const database = connect(scratch.url);
    const { token } = await benchShop(database, CUSTOMERS, Date.now());
    await database.close();
    const started = performance.now();
    const customers = fillTo(parseDatabaseUrl(scratch.url).location, BACKUP_BYTES);
    const size = fs.statSync(parseDatabaseUrl(scratch.url).location).size;
    process.stdout.write(
      `\nsqlite: ${customers} customers, ${(size / 2 ** 30).toFixed(2)} GB, made in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );

    const server = await startServer(scratch.url);
    try {
      const quiet = await backup(scratch.url, path.join(dir, 'quiet.db'));
      process.stdout.write(`  loyalty backup with no writes: ${quiet.toFixed(1)} s\n`);
      fs.rmSync(path.join(dir, 'quiet.db'));
      // Each PUT changes the customer (a new first name), so each one commits a write.
      const writes = (seconds: number) =>
        wrk(server.url, token, `"${LIST}/" .. math.random(1, ${customers})`, seconds, WRITE_CONNECTIONS, {
          body: { method: 'PUT', expr: `'{"first_name":"Name' .. math.random(1, 1000000000) .. '"}'` },
        });
      const seconds = Math.max(5, Math.ceil(quiet));
      await writes(WARMUP_SECONDS);
      const alone = await writes(seconds);
      process.stdout.write(`${line(`writes, ${WRITE_CONNECTIONS} connections, ${seconds} s`, alone)}\n`);
      const copying = backup(scratch.url, path.join(dir, 'busy.db'));
      const during = await writes(seconds);
      const took = await copying;
      process.stdout.write(`${line('the same, during loyalty backup', during, `   p99 ratio ${(during.p99Ms / alone.p99Ms).toFixed(2)} (target ≤ 2)`)}\n`);
      process.stdout.write(`  loyalty backup during the writes: ${took.toFixed(1)} s; load average ${load()}\n`);
    } finally {
      await server.stop();
    }
  } finally {
    await scratch.drop();
  }
}

export const workers: Benchmark = {
  description: 'cursor pages with --workers 2 vs one process (SQLite, PostgreSQL); writes during loyalty backup of 1 GB vs without',
  async run(args) {
    if (!wrkAvailable()) {
      process.stdout.write('This benchmark needs wrk: apt-get install wrk\n');
      process.exitCode = 2;
      return;
    }
    const only = args[0];
    if (only !== 'postgres') await pagesWithWorkers('sqlite');
    if (only !== 'sqlite') await pagesWithWorkers('postgres');
    if (only !== 'postgres') await writesDuringBackup();
  },
};
