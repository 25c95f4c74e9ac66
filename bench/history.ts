import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createShop, createToken } from '../src/shops/repository.js';
import type { Benchmark } from './lib/benchmark.js';
import { scratchDatabase, seedCustomers } from './lib/scratch.js';
import { startServer } from './lib/server.js';

// `npm run bench -- history [sqlite|postgres]`: does a customer's history slow their next
// request? One customer is given 1,000, then 10,000, then 100,000 open lots (grants of 10
// points, expiring in a year), among 10,000 other customers. At each size, requests one after
// another over HTTP: a grant, a deduction of 15 points (it consumes two lots), GET of the
// customer and a customers page that shows them. Target: at 100,000 lots every median and p99
// within 1.5× its own figure at 1,000.

const OTHERS = 10_000;
const SIZES = [1_000, 10_000, 100_000];
const SAMPLES = 200;
const HEAVY = '1';

type Dialect = 'sqlite' | 'postgres';
type Figures = Record<string, { median: number; p99: number }>;

function stats(ms: number[]): { median: number; p99: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, p99: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]! };
}

async function runDialect(dialect: Dialect): Promise<void> {
  const scratch = await scratchDatabase(dialect, 'history');
  const database = connect(scratch.url);
  try {
    await migrateToLatest(database.db);
    const now = Date.now();
    const shop = await createShop(database.db, { name: 'History shop', points_expiry_days: 365 }, now);
    const { token } = await createToken(database.db, shop.id, 'bench', now);
    await seedCustomers(database, shop.id, OTHERS + 1, now);
    await database.close();

    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
    const call = async (method: string, path: string, body?: unknown): Promise<number> => {
      const started = performance.now();
      const res = await fetch(`${server.url}/merchant_api/v1/${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}`);
      return performance.now() - started;
    };
    const grantLots = async (count: number) => {
      for (let done = 0; done < count; done += 1000) {
        const events = Array.from({ length: Math.min(1000, count - done) }, () => ({ customer_identifier: HEAVY, source: 'import', points_amount: 10 }));
        await call('POST', 'points_events/batch', { points_events: events });
      }
    };
    // Others have a few lots each, so that the page around the heavy customer is like any other.
    for (let b = 0; b < 10; b++) {
      const events = Array.from({ length: 1000 }, (_, e) => ({
        customer_identifier: String(2 + ((b * 1000 + e) % OTHERS)),
        source: 'order',
        points_amount: 25,
      }));
      await call('POST', 'points_events/batch', { points_events: events });
    }

    const results: { size: number; figures: Figures }[] = [];
    let lots = 0;
    try {
      for (const size of SIZES) {
        await grantLots(size - lots);
        lots = size;
        const samples: Record<string, number[]> = { grant: [], deduction: [], 'GET customer': [], 'customers page': [] };
        for (let i = 0; i < SAMPLES; i++) {
          samples.grant!.push(await call('POST', 'points_events', { customer_identifier: HEAVY, source: 'manual', points_amount: 10 }));
          samples.deduction!.push(await call('POST', 'points_events', { customer_identifier: HEAVY, source: 'manual', points_amount: -15 }));
          samples['GET customer']!.push(await call('GET', `customers/${HEAVY}`));
          samples['customers page']!.push(await call('GET', 'customers?pagination%5Bsince_id%5D=0&pagination%5Blimit%5D=25'));
        }
        results.push({ size, figures: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, stats(v)])) });
      }
    } finally {
      await server.stop();
    }

    const f = (ms: number) => `${ms.toFixed(2)} ms`.padStart(10);
    const lines = [
      `history on ${dialect}: one customer with ${SIZES.map((s) => s.toLocaleString('en-US')).join(', ')} open lots among ${OTHERS.toLocaleString('en-US')} others; ${SAMPLES} of each request, one at a time`,
    ];
    lines.push(
      `  ${'request'.padEnd(16)}${SIZES.map((s) => `${s.toLocaleString('en-US')} lots`.padStart(24)).join('')}   ratio at ${SIZES.at(-1)!.toLocaleString('en-US')} (target <= 1.5)`,
    );
    for (const name of Object.keys(results[0]!.figures)) {
      const cells = results.map((r) => `${f(r.figures[name]!.median)} /${f(r.figures[name]!.p99)}`.padStart(24)).join('');
      const first = results[0]!.figures[name]!;
      const last = results.at(-1)!.figures[name]!;
      const ratio = Math.max(last.median / first.median, last.p99 / first.p99);
      lines.push(
        `  ${name.padEnd(16)}${cells}   ${ratio.toFixed(2)} (median ${(last.median / first.median).toFixed(2)}, p99 ${(last.p99 / first.p99).toFixed(2)})  ${ratio <= 1.5 ? 'ok' : 'ABOVE TARGET'}`,
      );
    }
    lines.push('  (each cell: median / p99)', '');
    process.stdout.write(lines.join('\n'));
  } finally {
    await scratch.drop();
  }
}

export const history: Benchmark = {
  description: 'Requests for a customer with 1,000 to 100,000 open lots, against the same at 1,000 [sqlite|postgres]',
  async run(args) {
    const wanted = args.length > 0 ? args : ['sqlite', 'postgres'];
    for (const dialect of wanted) {
      if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`unknown database "${dialect}": use sqlite or postgres`);
      await runDialect(dialect);
    }
  },
};
