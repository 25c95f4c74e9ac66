import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Benchmark } from './index.js';
import { MAIN, startServer } from './lib/server.js';
import { wrk, wrkAvailable, type WrkResult } from './lib/wrk.js';

// `npm run bench -- orders [count]`: what earning costs. `loyalty import orders` of 1,000,000
// paid orders over 100,000 customers into a shop with an order rule, beside the same import
// with --no-earn into a twin shop, in the same run (SQLite). Target: the earning import runs at
// least half as fast as the plain one (ratio >= 0.5). Then PUT /orders over HTTP with wrk, with
// the rule enabled and disabled, in the same server.

const CUSTOMERS = 100_000;
const SECONDS = 10;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 8;

function cli(databaseUrl: string, args: string[]): string {
  return execFileSync(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' }, encoding: 'utf8', maxBuffer: 1 << 26 });
}

function writeLines(file: string, count: number, line: (i: number) => string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (let start = 0; start < count; start += 10_000) {
      const end = Math.min(count, start + 10_000);
      let chunk = '';
      for (let i = start; i < end; i++) chunk += `${line(i)}\n`;
      fs.writeSync(fd, chunk);
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** A shop with the customers, and (when `rule`) an order rule of a point per euro; returns its id and token. */
function prepareShop(databaseUrl: string, customersFile: string, rule: boolean): { shopId: number; token: string } {
  const created = JSON.parse(cli(databaseUrl, ['shops', 'create', '--name', rule ? 'Earning' : 'Plain', '--json']));
  cli(databaseUrl, ['import', 'customers', customersFile, '--shop', String(created.shop.id), '--no-earn', '--json']);
  return { shopId: created.shop.id, token: created.token };
}

async function createRule(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/merchant_api/v1/earning_rules`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'order', points_per_unit: 1, unit_amount: 1 }),
  });
  if (res.status !== 201) throw new Error(`creating the rule answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { data: { id: number } }).data.id;
}

export const orders: Benchmark = {
  description: 'loyalty import of paid orders with an order rule vs --no-earn; PUT /orders with and without the rule [count, default 1000000]',
  async run(args) {
    if (!wrkAvailable()) throw new Error('wrk is not installed: apt-get install -y wrk');
    const count = args[0] ? Number(args[0]) : 1_000_000;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-orders-'));
    try {
      const customersFile = path.join(dir, 'customers.ndjson');
      writeLines(customersFile, CUSTOMERS, (i) => JSON.stringify({ remote_id: i + 1, email: `customer${i + 1}@example.com` }));
      const ordersFile = path.join(dir, 'orders.ndjson');
      writeLines(ordersFile, count, (i) =>
        JSON.stringify({ remote_id: i + 1, customer_remote_id: (i % CUSTOMERS) + 1, total: 10 + (i % 190) + 0.99, currency: 'EUR', financial_status: 'paid', placed_at: '2026-01-15T12:00:00Z' }),
      );

      // Two databases, so that neither import finds the other's rows in its B-trees.
      const runs: { name: string; seconds: number; imported: number }[] = [];
      let earningDb = '';
      let earning = { shopId: 0, token: '' };
      for (const earn of [false, true]) {
        const databaseUrl = `sqlite:${path.join(dir, earn ? 'earning.db' : 'plain.db')}`;
        const shop = prepareShop(databaseUrl, customersFile, earn);
        if (earn) {
          const server = await startServer(databaseUrl, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
          try {
            await createRule(server.url, shop.token);
          } finally {
            await server.stop();
          }
          earningDb = databaseUrl;
          earning = shop;
        }
        const started = process.hrtime.bigint();
        const summary = JSON.parse(cli(databaseUrl, ['import', 'orders', ordersFile, '--shop', String(shop.shopId), ...(earn ? [] : ['--no-earn']), '--json']));
        runs.push({ name: earn ? 'with the order rule' : '--no-earn', seconds: Number(process.hrtime.bigint() - started) / 1e9, imported: summary.imported });
      }
      const [plain, earned] = runs as [(typeof runs)[0], (typeof runs)[0]];
      const lines = [`orders on sqlite: loyalty import of ${count.toLocaleString('en-US')} paid orders over ${CUSTOMERS.toLocaleString('en-US')} customers`];
      for (const r of runs) lines.push(`  ${r.name.padEnd(22)}${`${r.seconds.toFixed(1)} s`.padStart(10)}${`${(r.imported / r.seconds).toFixed(0)} orders/s`.padStart(18)}`);
      const ratio = earned.imported / earned.seconds / (plain.imported / plain.seconds);
      lines.push(`  ratio earning / plain: ${ratio.toFixed(2)} (target >= 0.5)  ${ratio >= 0.5 ? 'ok' : 'BELOW TARGET'}`, '');
      process.stdout.write(lines.join('\n'));

      // PUT /orders over HTTP: new paid orders, with the rule enabled, then disabled.
      const server = await startServer(earningDb, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
      try {
        const ruleId = ((await (await fetch(`${server.url}/merchant_api/v1/earning_rules`, { headers: { authorization: `Bearer ${earning.token}` } })).json()) as { data: { id: number }[] }).data[0]!.id;
        const body = `'{"customer_remote_id":' .. math.random(1, ${CUSTOMERS}) .. ',"total":59.9,"currency":"EUR","financial_status":"paid","placed_at":"2026-01-15T12:00:00Z"}'`;
        let next = 0;
        const measure = () => {
          // Each run PUTs orders no earlier run wrote: remote ids from its own range.
          const base = count + 1 + 10_000_000 * ++next;
          return wrk(server.url, earning.token, `"/merchant_api/v1/orders/" .. (${base} + math.random(0, 9999999))`, SECONDS, CONNECTIONS, {
            warmupSeconds: WARMUP_SECONDS,
            pid: server.child.pid,
            body: { method: 'PUT', expr: body },
          });
        };
        const withRule = await measure();
        const off = await fetch(`${server.url}/merchant_api/v1/earning_rules/${ruleId}`, {
          method: 'PATCH',
          headers: { authorization: `Bearer ${earning.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ enabled: false }),
        });
        if (off.status !== 200) throw new Error(`disabling the rule answered ${off.status}`);
        const withoutRule = await measure();
        const row = (name: string, r: WrkResult) =>
          `  ${name.padEnd(22)}${`${r.rps.toFixed(0)} req/s`.padStart(14)}${`p50 ${r.p50Ms.toFixed(1)} ms`.padStart(16)}${`p99 ${r.p99Ms.toFixed(1)} ms`.padStart(16)}${`${(r.cpuUsPerRequest ?? 0).toFixed(0)} µs CPU`.padStart(14)}  non-2xx ${r.non2xx}`;
        process.stdout.write(
          [
            `PUT /orders over HTTP (new paid orders; wrk, ${CONNECTIONS} connections, ${SECONDS} s each)`,
            row('order rule enabled', withRule),
            row('no order rule', withoutRule),
            `  ratio with / without: ${(withRule.rps / withoutRule.rps).toFixed(2)} req/s, ${((withoutRule.cpuUsPerRequest ?? 0) / (withRule.cpuUsPerRequest ?? 1)).toFixed(2)} CPU`,
            '',
          ].join('\n'),
        );
      } finally {
        await server.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
