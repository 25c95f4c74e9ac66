import { connect, type Database } from '../src/db/connect.js';
import { transaction } from '../src/db/dialect.js';
import { postEvents, type Posting } from '../src/ledger/post.js';
import type { Benchmark } from './index.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { startServer } from './lib/server.js';

// `npm run bench -- reports [sqlite|postgres]`: a year by day (GET /reports/points) for a shop
// with 1,000,000 events beside the same report for a shop with 10,000 events, in one run and
// one database. The events are posted through the ledger (postEvents, as every writer does), so
// the aggregates are the ones posting keeps. Targets: the big shop's median within 1.5× the
// small one's, and under 50 ms.

const DAY = 86_400_000;
const CUSTOMERS = 1000;
const POSTINGS_PER_TRANSACTION = 5000;
const SAMPLES = 100;
type Dialect = 'sqlite' | 'postgres';

/** `count` events: grants spread over the year before `now`, one in five a deduction of a few points at `now`. */
export async function postHistory(database: Database, shopId: number, count: number, now: number): Promise<void> {
  let seed = shopId;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let done = 0; done < count; done += POSTINGS_PER_TRANSACTION) {
    const postings: Posting[] = Array.from({ length: Math.min(POSTINGS_PER_TRANSACTION, count - done) }, (_, i) => {
      // Every fifth round of the customers deducts, from what the rounds before granted.
      const deduction = Math.floor((done + i) / CUSTOMERS) % 5 === 4;
      return {
        customer: { remoteId: 1 + ((done + i) % CUSTOMERS), email: null },
        entry: {
          source: deduction ? 'manual' : 'order',
          points: deduction ? -3 : 10 + Math.floor(random() * 90),
          credits: 0,
          internalNote: null,
          externalNote: null,
          customActionName: null,
          // Deductions at `now`, after every grant: always covered.
          appliedAt: deduction ? now : now - Math.floor(random() * 365 * DAY),
          expiresAt: null,
        },
      };
    });
    await transaction(database.db, async (trx) => {
      const posted = await postEvents(trx, shopId, postings, now);
      if (posted.failures.length > 0) throw new Error(`history could not post: ${posted.failures[0]!.message}`);
    });
  }
}

/** `[sqlite|postgres]... [--events N]`: the databases to run on (both by default) and the big shop's events (1,000,000 by default). */
export function benchArgs(args: string[]): { dialects: Dialect[]; events: number } {
  const at = args.indexOf('--events');
  const events = at >= 0 ? Number(args[at + 1]) : 1_000_000;
  const named = args.filter((a, i) => !a.startsWith('--') && (at < 0 || i !== at + 1));
  for (const dialect of named) if (dialect !== 'sqlite' && dialect !== 'postgres') throw new Error(`unknown database "${dialect}": use sqlite or postgres`);
  return { dialects: named.length > 0 ? (named as Dialect[]) : ['sqlite', 'postgres'], events };
}

export function median(ms: number[]): { median: number; p99: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, p99: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]! };
}

async function runDialect(dialect: Dialect, big: number, small: number): Promise<void> {
  const scratch = await scratchDatabase(dialect, 'reports');
  try {
    const database = connect(scratch.url);
    const now = Date.now();
    const shops: { name: string; events: number; token: string }[] = [];
    try {
      for (const events of [big, small]) {
        const { shop, token } = await benchShop(database, CUSTOMERS, now);
        const started = performance.now();
        await postHistory(database, shop.id, events, now);
        process.stdout.write(`  ${events.toLocaleString('en-US')} events posted in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
        shops.push({ name: `${events.toLocaleString('en-US')} events`, events, token });
      }
    } finally {
      await database.close();
    }
    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
    const to = new Date(now).toISOString().slice(0, 10);
    const from = new Date(now - 365 * DAY).toISOString().slice(0, 10);
    const report = async (token: string) => {
      const started = performance.now();
      const res = await fetch(`${server.url}/merchant_api/v1/reports/points?from=${from}&to=${to}&interval=day`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`report answered ${res.status}`);
      return performance.now() - started;
    };
    const samples = shops.map(() => [] as number[]);
    try {
      for (let i = 0; i < 10; i++) for (const shop of shops) await report(shop.token);
      // Alternated, so that both shops see the same machine.
      for (let i = 0; i < SAMPLES; i++) for (let k = 0; k < shops.length; k++) samples[k]!.push(await report(shops[k]!.token));
    } finally {
      await server.stop();
    }
    const [large, base] = samples.map(median) as [{ median: number; p99: number }, { median: number; p99: number }];
    const ratio = large.median / base.median;
    process.stdout.write(
      [
        `reports on ${dialect}: a year by day (366 periods), ${SAMPLES} requests per shop, alternated`,
        `  ${shops[0]!.name.padEnd(18)} median ${large.median.toFixed(2)} ms, p99 ${large.p99.toFixed(2)} ms  ${large.median < 50 ? 'ok (< 50 ms)' : 'ABOVE 50 ms'}`,
        `  ${shops[1]!.name.padEnd(18)} median ${base.median.toFixed(2)} ms, p99 ${base.p99.toFixed(2)} ms`,
        `  ratio ${ratio.toFixed(2)} (target <= 1.5) ${ratio <= 1.5 ? 'ok' : 'ABOVE TARGET'}`,
        '',
      ].join('\n'),
    );
  } finally {
    await scratch.drop();
  }
}

export const reports: Benchmark = {
  description: 'A year by day of the points report: a shop with 1,000,000 events against one with 10,000 [sqlite|postgres] [--events N]',
  async run(args) {
    const { dialects, events } = benchArgs(args);
    for (const dialect of dialects) await runDialect(dialect, events, 10_000);
  },
};
