import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Benchmark } from './lib/benchmark.js';
import { MAIN, startServer } from './lib/server.js';
import { wrk, wrkAvailable, type WrkResult } from './lib/wrk.js';

// `npm run bench -- orders [count]`: what earning costs. `loyalty import orders` of 1,000,000
// paid orders over 100,000 customers into a shop with an order rule, beside the same import
// with --no-earn into a twin shop, in the same run (SQLite). Target: the earning import runs at
// least half as fast as the plain one (ratio >= 0.5). Then PUT /orders over HTTP with wrk, with
// the rule enabled and disabled, in the same server.

export const CUSTOMERS = 100_000;
const SECONDS = 10;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 8;

function cli(databaseUrl: string, args: string[]): string {
  return execFileSync(process.execPath, [MAIN, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
}

export function writeLines(file: string, count: number, line: (i: number) => string): void {
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
export function prepareShop(databaseUrl: string, customersFile: string, rule: boolean): { shopId: number; token: string } {
  const created = JSON.parse(cli(databaseUrl, ['shops', 'create', '--name', rule ? 'Earning' : 'Plain', '--json']));
  cli(databaseUrl, ['import', 'customers', customersFile, '--shop', String(created.shop.id), '--no-earn', '--json']);
  return { shopId: created.shop.id, token: created.token };
}

async function api(url: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}/merchant_api/v1/${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** Five tiers, as a shop with a VIP programme has them. */
const TIERS = [
  { name: 'Bronze', points_threshold: 0 },
  { name: 'Silver', points_threshold: 500 },
  { name: 'Gold', points_threshold: 1500, earning_multiplier: 1.25 },
  { name: 'Platinum', points_threshold: 4000, earning_multiplier: 1.5 },
  { name: 'Diamond', points_threshold: 10000, earning_multiplier: 2 },
];
const REFERRALS = 5_000;

/**
 * The programme of the earning shop: the order rule, five tiers, two running campaigns, both referral rules, and
 * REFERRALS pending referrals whose friends (customers without orders yet) the import's first
 * paid orders complete. Waits until the shop's customers are tiered.
 */
export async function createProgramme(url: string, token: string, metric: string): Promise<void> {
  // Tiers judged by the amount spent (in euros, the thresholds as they are) keep the order days and each customer's sums.
  if (metric !== 'points_earned') await api(url, token, 'PATCH', 'shop', { vip_tier_metric: metric, currency: 'EUR' });
  await api(url, token, 'POST', 'earning_rules', { kind: 'order', points_per_unit: 1, unit_amount: 1 });
  await api(url, token, 'POST', 'earning_rules', { kind: 'referral_referrer', points_amount: 500 });
  await api(url, token, 'POST', 'earning_rules', { kind: 'referral_friend', points_amount: 200 });
  let lastTier = 0;
  const tierIds: number[] = [];
  for (const tier of TIERS) tierIds.push((lastTier = (await api(url, token, 'POST', 'vip_tiers', tier)).data.id));
  // Two campaigns running at every order's placed_at: each order earns under the better one.
  const running = { starts_at: '2026-01-01T00:00:00Z', ends_at: '2026-02-01T00:00:00Z' };
  await api(url, token, 'POST', 'campaigns', { name: 'January bonus', bonus_points: 5, ...running });
  await api(url, token, 'POST', 'campaigns', { name: 'Top tiers double', multiplier: 2, vip_tier_ids: tierIds.slice(-2), ...running });
  for (let i = 0; i < REFERRALS; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, k) =>
        api(url, token, 'POST', 'referrals', { referrer_remote_id: i + k + 1, referred_email: `customer${CUSTOMERS / 2 + i + k + 1}@example.com` }),
      ),
    );
  }
  await retiered(url, token, lastTier, 600_000);
}

/** Waits until the tier's recompute_status is done; returns how long that took. */
async function retiered(url: string, token: string, tierId: number, timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    if ((await api(url, token, 'GET', `vip_tiers/${tierId}`)).data.recompute_status === 'done') return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`re-tiering took over ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const orders: Benchmark = {
  description:
    'loyalty import of paid orders with an order rule vs --no-earn; PUT /orders with and without the rule [count, default 1000000] [vip_tier_metric, default amount_spent]',
  async run(args) {
    if (!wrkAvailable()) throw new Error('wrk is not installed: apt-get install -y wrk');
    const count = args[0] ? Number(args[0]) : 1_000_000;
    const metric = args[1] ?? 'amount_spent';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-orders-'));
    try {
      const customersFile = path.join(dir, 'customers.ndjson');
      writeLines(customersFile, CUSTOMERS, (i) => JSON.stringify({ remote_id: i + 1, email: `customer${i + 1}@example.com` }));
      const ordersFile = path.join(dir, 'orders.ndjson');
      writeLines(ordersFile, count, (i) =>
        JSON.stringify({
          remote_id: i + 1,
          customer_remote_id: (i % CUSTOMERS) + 1,
          total: 10 + (i % 190) + 0.99,
          currency: 'EUR',
          financial_status: 'paid',
          placed_at: '2026-01-15T12:00:00Z',
        }),
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
            await createProgramme(server.url, shop.token, metric);
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
      const lines = [
        `orders on sqlite: loyalty import of ${count.toLocaleString('en-US')} paid orders over ${CUSTOMERS.toLocaleString('en-US')} customers`,
        `  (earning: the order rule, ${TIERS.length} VIP tiers by ${metric}, 2 running campaigns, both referral rules and ${REFERRALS.toLocaleString('en-US')} pending referrals)`,
      ];
      for (const r of runs)
        lines.push(`  ${r.name.padEnd(22)}${`${r.seconds.toFixed(1)} s`.padStart(10)}${`${(r.imported / r.seconds).toFixed(0)} orders/s`.padStart(18)}`);
      const ratio = earned.imported / earned.seconds / (plain.imported / plain.seconds);
      lines.push(`  ratio earning / plain: ${ratio.toFixed(2)} (target >= 0.5)  ${ratio >= 0.5 ? 'ok' : 'BELOW TARGET'}`, '');
      process.stdout.write(lines.join('\n'));

      // PUT /orders over HTTP: new paid orders, with the rule enabled, then disabled.
      const server = await startServer(earningDb, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
      try {
        const rules = (await api(server.url, earning.token, 'GET', 'earning_rules')).data as { id: number; kind: string }[];
        const ruleId = rules.find((r) => r.kind === 'order')!.id;
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
        await api(server.url, earning.token, 'PATCH', `earning_rules/${ruleId}`, { enabled: false });
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

        // Changing a tier's threshold re-tiers the shop's customers in the background: one client
        // reading customers, before and while it runs, sees how long any request waited.
        const probe = (seconds: number) => wrk(server.url, earning.token, `"/merchant_api/v1/customers/" .. math.random(1, ${CUSTOMERS})`, seconds, 1);
        const quiet = await probe(SECONDS);
        const tiers = (await api(server.url, earning.token, 'GET', 'vip_tiers')).data as { id: number; name: string }[];
        const gold = tiers.find((t) => t.name === 'Gold')!.id;
        await api(server.url, earning.token, 'PATCH', `vip_tiers/${gold}`, { points_threshold: 1200 });
        const [during, tookMs] = await Promise.all([probe(30), retiered(server.url, earning.token, gold, 600_000)]);
        const latency = (name: string, r: WrkResult) =>
          `  ${name.padEnd(26)}${`p50 ${r.p50Ms.toFixed(1)} ms`.padStart(14)}${`p99 ${r.p99Ms.toFixed(1)} ms`.padStart(16)}${`max ${r.maxMs.toFixed(1)} ms`.padStart(16)}`;
        process.stdout.write(
          [
            `re-tiering ${CUSTOMERS.toLocaleString('en-US')} customers after Gold's threshold changed: done in ${(tookMs / 1000).toFixed(1)} s`,
            `  (GET /customers/{id}, wrk, 1 connection)`,
            latency('before', quiet),
            latency('during (30 s from the change)', during),
            `  slowest request while re-tiering: ${during.maxMs.toFixed(1)} ms (target <= 50)  ${during.maxMs <= 50 ? 'ok' : 'ABOVE TARGET'}`,
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
