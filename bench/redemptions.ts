import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createShop, createToken } from '../src/shops/repository.js';
import { eachDialect, type Benchmark } from './lib/benchmark.js';
import { scratchDatabase, seedCustomers } from './lib/scratch.js';
import { startServer } from './lib/server.js';
import { wrk, wrkAvailable, type WrkResult } from './lib/wrk.js';

// `npm run bench -- redemptions [sqlite|postgres]`: what a redemption costs beside the single
// points event it writes. Over HTTP against a real server, with wrk (8 connections, 10 s after
// a 3 s warm-up), each request for a random one of 5,000 customers who hold 100 lots each:
// a deduction of 10 points (POST /points_events), a redemption of a 10-point reward with a
// generated code, and one with a pool of 100,000 uploaded codes. Target: a redemption costs at
// most 1.5× the deduction, in server CPU per request and in requests per second.

const CUSTOMERS = 5_000;
const LOTS_PER_CUSTOMER = 100;
const POOL = 100_000;
const SECONDS = 10;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 8;
const TARGET = 1.5;

type Dialect = 'sqlite' | 'postgres';

async function runDialect(dialect: Dialect): Promise<void> {
  const scratch = await scratchDatabase(dialect, 'redemptions');
  const database = connect(scratch.url);
  try {
    await migrateToLatest(database.db);
    const now = Date.now();
    const shop = await createShop(database.db, { name: 'Redemptions shop', points_expiry_days: 365 }, now);
    const { token } = await createToken(database.db, shop.id, 'bench', now);
    await seedCustomers(database, shop.id, CUSTOMERS, now);
    await database.close();

    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
    try {
      const call = async (path: string, body: unknown) => {
        const res = await fetch(`${server.url}/merchant_api/v1/${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status >= 300) throw new Error(`POST ${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
        return (await res.json()) as { data: unknown };
      };
      // Every customer holds many lots, enough for every request below.
      for (let b = 0; b < (CUSTOMERS * LOTS_PER_CUSTOMER) / 1000; b++) {
        const events = Array.from({ length: 1000 }, (_, e) => ({
          customer_identifier: String(((b * 1000 + e) % CUSTOMERS) + 1),
          source: 'order',
          points_amount: 50,
        }));
        await call('points_events/batch', { points_events: events });
      }
      const generated = (await call('rewards', { name: 'Generated', kind: 'free_shipping', points_price: 10, code_prefix: 'GEN-' })).data as { id: number };
      const pooled = (await call('rewards', { name: 'Pooled', kind: 'free_shipping', points_price: 10 })).data as { id: number };
      for (let c = 0; c < POOL; c += 10_000) await call(`rewards/${pooled.id}/codes`, { codes: Array.from({ length: 10_000 }, (_, i) => `POOL-${c + i}`) });

      const customer = `math.random(1, ${CUSTOMERS})`;
      const measure = (path: string, body: string) =>
        wrk(server.url, token, `"/merchant_api/v1/${path}"`, SECONDS, CONNECTIONS, {
          warmupSeconds: WARMUP_SECONDS,
          pid: server.child.pid,
          body: { method: 'POST', expr: body },
        });
      const runs: [string, WrkResult][] = [];
      runs.push([
        'deduction (POST /points_events)',
        await measure('points_events', `'{"customer_identifier":"' .. ${customer} .. '","source":"manual","points_amount":-10}'`),
      ]);
      runs.push(['redemption, generated code', await measure('redemptions', `'{"reward_id":${generated.id},"customer_identifier":"' .. ${customer} .. '"}'`)]);
      runs.push(['redemption, pool of 100,000', await measure('redemptions', `'{"reward_id":${pooled.id},"customer_identifier":"' .. ${customer} .. '"}'`)]);

      const [, base] = runs[0]!;
      const lines = [
        `redemptions on ${dialect}: ${CUSTOMERS.toLocaleString('en-US')} customers with ${LOTS_PER_CUSTOMER} lots each; wrk, ${CONNECTIONS} connections, ${SECONDS} s each`,
        `  ${'request'.padEnd(32)}${'req/s'.padStart(9)}${'p50'.padStart(10)}${'p99'.padStart(10)}${'CPU/req'.padStart(11)}${'non-2xx'.padStart(9)}   cost vs deduction (target <= ${TARGET})`,
      ];
      for (const [name, r] of runs) {
        const cpu = r.cpuUsPerRequest === null || base.cpuUsPerRequest === null ? null : r.cpuUsPerRequest / base.cpuUsPerRequest;
        const rps = base.rps / r.rps;
        const cost = Math.max(cpu ?? 0, rps);
        lines.push(
          `  ${name.padEnd(32)}${r.rps.toFixed(0).padStart(9)}${`${r.p50Ms.toFixed(1)} ms`.padStart(10)}${`${r.p99Ms.toFixed(1)} ms`.padStart(10)}` +
            `${r.cpuUsPerRequest === null ? '?'.padStart(11) : `${r.cpuUsPerRequest.toFixed(0)} µs`.padStart(11)}${String(r.non2xx).padStart(9)}   ` +
            (r === base
              ? '1.00 (baseline)'
              : `${cost.toFixed(2)} (CPU ${cpu === null ? '?' : cpu.toFixed(2)}, req/s ${rps.toFixed(2)})  ${cost <= TARGET ? 'ok' : 'ABOVE TARGET'}`),
        );
      }
      lines.push('');
      process.stdout.write(lines.join('\n'));
    } finally {
      await server.stop();
    }
  } finally {
    await scratch.drop();
  }
}

export const redemptions: Benchmark = {
  description: 'Redemptions (generated code, pool of 100,000) against a single deduction, over HTTP [sqlite|postgres]',
  async run(args) {
    if (!wrkAvailable()) throw new Error('wrk is not installed: apt-get install -y wrk');
    await eachDialect(args, runDialect);
  },
};
