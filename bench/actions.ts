import { connect } from '../src/db/connect.js';
import { insertRows, transaction } from '../src/db/dialect.js';
import { doAction } from '../src/earning/actions.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createShop, createToken } from '../src/shops/repository.js';
import { eachDialect, type Benchmark } from './lib/benchmark.js';
import { scratchDatabase, seedCustomers } from './lib/scratch.js';
import { startServer } from './lib/server.js';
import { wrk, wrkAvailable, type WrkResult } from './lib/wrk.js';

// `npm run bench -- actions [sqlite|postgres]`: what an action (a way to earn, docs/earning.md)
// costs beside the single points event it writes. Over HTTP against a real server, with wrk
// (8 connections, 8 s after a 3 s warm-up): a grant of 10 points (POST /points_events) for a
// random one of 5,000 customers; POST /customers/{id}/actions for a random customer with a
// random distinct_id; and the action sent for one customer only, one who had done none and one
// who had done it 10,000 times before (measured in the order A B B A). Targets: an action runs at >= 0.8 of the grant's
// rate, and the customer with 10,000 earlier actions within 1.5x of the one with none.

const CUSTOMERS = 5_000;
const EARLIER = 10_000;
const SECONDS = 8;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 8;
const RATE_TARGET = 0.8;
const HISTORY_TARGET = 1.5;

type Dialect = 'sqlite' | 'postgres';

/** The rule, as POST /earning_rules {"kind": "custom_action", "name": "checkin", "points_amount": 10, "limit_count": 1000000, "limit_period": "day"} stores it. */
const RULE = {
  kind: 'custom_action',
  enabled: 1,
  points_per_unit: null,
  unit_amount: null,
  min_order_total: null,
  currency: null,
  points_amount: 10,
  credits_amount: null,
  name: 'checkin',
  description: null,
  url: null,
  limit_count: 1_000_000,
  limit_period: 'day',
  claimable: 0,
} as const;

const ID = `math.random(1, 1000000000) .. '-' .. math.random(1, 1000000000)`;

/**
 * A shop with 5,000 customers, an action rule without a practical limit, and one customer who
 * did it 10,000 times (through the service the route calls, in a transaction each, before the
 * server starts: over HTTP one customer's actions queue on their row, one at a time).
 */
async function prepare(dialect: Dialect) {
  const scratch = await scratchDatabase(dialect, 'actions');
  const database = connect(scratch.url);
  await migrateToLatest(database.db);
  const now = Date.now();
  const shop = await createShop(database.db, { name: 'Actions shop', timezone: 'Asia/Kolkata' }, now);
  const { token } = await createToken(database.db, shop.id, 'bench', now);
  await seedCustomers(database, shop.id, CUSTOMERS + 2, now);
  await insertRows(database.db, 'earning_rules', [{ ...RULE, shop_id: shop.id, id: 1, created_at: now, updated_at: now }]);
  const veteran = CUSTOMERS + 2;
  for (let i = 0; i < EARLIER; i++) {
    await transaction(database.db, (trx) => doAction(trx, shop, String(veteran), 'checkin', `earlier-${i}`, now));
  }
  await database.close();
  const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
  return { scratch, server, token, fresh: CUSTOMERS + 1, veteran };
}

function report(dialect: Dialect, runs: [string, WrkResult][]): string {
  const [grant, distinct, fresh1, veteran1, veteran2, fresh2] = runs.map(([, r]) => r) as WrkResult[] as [WrkResult, ...WrkResult[]];
  // The one-customer runs go A B B A, so that a load that drifts during the run weighs on both alike.
  const fresh = { rps: (fresh1!.rps + fresh2!.rps) / 2 };
  const veteran = { rps: (veteran1!.rps + veteran2!.rps) / 2 };
  const lines = [
    `actions on ${dialect}: ${CUSTOMERS.toLocaleString('en-US')} customers; wrk, ${CONNECTIONS} connections, ${SECONDS} s each`,
    `  ${'request'.padEnd(44)}${'req/s'.padStart(9)}${'p50'.padStart(10)}${'p99'.padStart(10)}${'CPU/req'.padStart(11)}${'non-2xx'.padStart(9)}`,
  ];
  for (const [name, r] of runs) {
    lines.push(
      `  ${name.padEnd(44)}${r.rps.toFixed(0).padStart(9)}${`${r.p50Ms.toFixed(1)} ms`.padStart(10)}${`${r.p99Ms.toFixed(1)} ms`.padStart(10)}` +
        `${r.cpuUsPerRequest === null ? '?'.padStart(11) : `${r.cpuUsPerRequest.toFixed(0)} µs`.padStart(11)}${String(r.non2xx).padStart(9)}`,
    );
  }
  const rate = distinct!.rps / grant.rps;
  const history = Math.max(fresh.rps / veteran.rps, veteran.rps / fresh.rps);
  lines.push(`  actions / grant, req/s: ${rate.toFixed(2)} (target >= ${RATE_TARGET}) ${rate >= RATE_TARGET ? 'ok' : 'BELOW TARGET'}`);
  lines.push(
    `  10,000 earlier actions vs none, req/s: ${history.toFixed(2)}x apart (target <= ${HISTORY_TARGET}) ${history <= HISTORY_TARGET ? 'ok' : 'ABOVE TARGET'}`,
    '',
  );
  return lines.join('\n');
}

async function runDialect(dialect: Dialect): Promise<void> {
  const { scratch, server, token, fresh, veteran } = await prepare(dialect);
  try {
    const measure = (path: string, body: string) =>
      wrk(server.url, token, path, SECONDS, CONNECTIONS, { warmupSeconds: WARMUP_SECONDS, pid: server.child.pid, body: { method: 'POST', expr: body } });
    const customer = `math.random(1, ${CUSTOMERS})`;
    const action = `'{"name":"checkin","distinct_id":"' .. ${ID} .. '"}'`;
    const runs: [string, WrkResult][] = [];
    runs.push([
      'grant (POST /points_events)',
      await measure('"/merchant_api/v1/points_events"', `'{"customer_identifier":"' .. ${customer} .. '","source":"manual","points_amount":10}'`),
    ]);
    runs.push(['action, random customer and distinct_id', await measure(`"/merchant_api/v1/customers/" .. ${customer} .. "/actions"`, action)]);
    const one = (name: string, id: number) => measure(`"/merchant_api/v1/customers/${id}/actions"`, action).then((r) => runs.push([name, r]));
    const none = 'action, one customer with none before';
    const many = `action, one customer with ${EARLIER.toLocaleString('en-US')} before`;
    await one(none, fresh);
    await one(many, veteran);
    await one(many, veteran);
    await one(none, fresh);
    process.stdout.write(report(dialect, runs));
  } finally {
    await server.stop();
    await scratch.drop();
  }
}

export const actions: Benchmark = {
  description: 'Actions (ways to earn) against a single grant, and a customer with 10,000 earlier actions against one with none, over HTTP [sqlite|postgres]',
  async run(args) {
    if (!wrkAvailable()) throw new Error('wrk is not installed: apt-get install -y wrk');
    await eachDialect(args, runDialect);
  },
};
