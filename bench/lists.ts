import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Benchmark } from './lib/benchmark.js';
import { writeCustomers } from './lib/customers.js';
import { MAIN, mb, startReference, startServer } from './lib/server.js';
import { wrk, wrkAvailable, type WrkResult } from './lib/wrk.js';

// `npm run bench -- lists`: 1,000,000 customers imported with `loyalty import` (timed), then
// list pages over HTTP against a real `loyalty serve`: cursor pages of 25 and 250 at random
// depths and offset pages up to 500 × 250, beside the ceiling of a bare Fastify route that
// answers a fixed body of the same size.

const CUSTOMERS = 1_000_000;
const SECONDS = 10;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 10;

function cli(databaseUrl: string, args: string[]): string {
  return execFileSync(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', maxBuffer: 1 << 26 });
}

const cpu = (r: WrkResult) => (r.cpuUsPerRequest === null ? '' : `   server CPU ${r.cpuUsPerRequest.toFixed(0).padStart(5)} µs/req`);

const line = (name: string, r: WrkResult, extra = '') =>
  `  ${name.padEnd(38)} ${r.rps.toFixed(0).padStart(7)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(6)} ms${cpu(r)}${r.non2xx ? `   NON-2XX ${r.non2xx}` : ''}${extra}`;

// wrk shares the 2 cores with the server, the same way for the ceiling and the API, so the
// ratio is fair; other load on the machine is not, so it is printed with the figures.
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export const lists: Benchmark = {
  description: 'list pages (cursor and offset) over 1,000,000 customers vs a bare Fastify ceiling; import time',
  async run() {
    if (!wrkAvailable()) {
      process.stdout.write('This benchmark needs wrk: apt-get install wrk\n');
      process.exitCode = 2;
      return;
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-lists-'));
    const databaseUrl = `sqlite:${path.join(dir, 'bench.db')}`;
    try {
      const created = JSON.parse(cli(databaseUrl, ['shops', 'create', '--name', 'Bench', '--json']));
      const shopId: number = created.shop.id;
      const token: string = created.token;
      const file = path.join(dir, 'customers.ndjson');
      await writeCustomers(file, CUSTOMERS);
      const started = process.hrtime.bigint();
      const summary = JSON.parse(cli(databaseUrl, ['import', 'customers', file, '--shop', String(shopId), '--json']));
      const importSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      process.stdout.write(
        `import of ${summary.imported} customers: ${importSeconds.toFixed(1)} s (${(summary.imported / importSeconds).toFixed(0)} rows/s; target under 10 s; the raw references: bench/imports.ts)\n`,
      );

      const server = await startServer(databaseUrl);
      const list = '/merchant_api/v1/customers';
      try {
        const sample = await fetch(`${server.url}${list}?pagination[since_id]=500000&pagination[limit]=25`, { headers: { authorization: `Bearer ${token}` } });
        const body = await sample.text();
        const bodyFile = path.join(dir, 'ceiling.json');
        fs.writeFileSync(bodyFile, body);
        const ceiling = await startReference('ceiling.js', [bodyFile]);
        const rawPage = await startReference('raw-page.js', [databaseUrl.slice('sqlite:'.length), String(shopId)]);
        process.stdout.write(
          `\n${CONNECTIONS} connections, ${SECONDS} s each after ${WARMUP_SECONDS} s of warm-up; page of 25 customers = ${body.length} bytes; load average ${load()}\n`,
        );
        const measure = (url: string, pid: number, auth: string | null, pathExpr: string) =>
          wrk(url, auth, pathExpr, SECONDS, CONNECTIONS, { warmupSeconds: WARMUP_SECONDS, pid });
        try {
          // The ceiling and the cursor pages of 25 run back to back, so they see the same machine.
          const bare = await measure(ceiling.url, ceiling.pid, null, `"${list}"`);
          process.stdout.write(`${line('ceiling (bare Fastify, same body)', bare)}\n`);
          const since = (limit: number) => `"${list}?pagination[since_id]=" .. math.random(0, ${CUSTOMERS}) .. "&pagination[limit]=${limit}"`;
          const api = (pathExpr: string) => measure(server.url, server.child.pid!, token, pathExpr);
          const c25 = await api(since(25));
          process.stdout.write(`${line('cursor, limit 25, random depth', c25, `   ratio ${(c25.rps / bare.rps).toFixed(2)} (target ≥ 0.40, p99 < 15 ms)`)}\n`);
          // What bounds that ratio: the API's own cost per request (an empty page: token,
          // rate limit, metrics, one query) and the cost of one raw SQLite read of the page.
          const empty = await api(`"/merchant_api/v1/vip_tiers?pagination[limit]=25"`);
          process.stdout.write(`${line('  reference: empty page through the API', empty, `   ratio ${(empty.rps / bare.rps).toFixed(2)}`)}\n`);
          const raw = await measure(rawPage.url, rawPage.pid, null, since(25));
          process.stdout.write(`${line('  reference: bare Fastify + 1 raw read', raw, `   ratio ${(raw.rps / bare.rps).toFixed(2)}`)}\n`);
          const c250 = await api(since(250));
          process.stdout.write(`${line('cursor, limit 250, random depth', c250)}\n`);
          const oRandom = await api(`"${list}?pagination[page]=" .. math.random(1, 500) .. "&pagination[per_page]=250"`);
          process.stdout.write(`${line('offset, random page ≤ 500, 250/page', oRandom)}\n`);
          const o500 = await api(`"${list}?pagination[page]=500&pagination[per_page]=250"`);
          process.stdout.write(`${line('offset, page 500 × 250', o500, '   (target p99 < 100 ms)')}\n`);
          const sorted = await api(`"${list}?pagination[page]=500&pagination[per_page]=250&sort[order_type]=updated_at&sort[order_direction]=desc"`);
          process.stdout.write(`${line('offset, page 500 × 250, updated_at desc', sorted, '   (target p99 < 100 ms)')}\n`);
        } finally {
          ceiling.stop();
          rawPage.stop();
        }
        process.stdout.write(`\nserver peak RSS ${mb(server.peakRss())}; load average ${load()}\n`);
      } finally {
        await server.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
