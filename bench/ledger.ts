import { connect, type Database } from '../src/db/connect.js';
import { transaction } from '../src/db/dialect.js';
import type { PointsEventsTable } from '../src/db/tables.js';
import { NO_BALANCES } from '../src/ledger/balances.js';
import { planPostings, type LedgerPlan } from '../src/ledger/plan.js';
import { posting } from '../src/ledger/posting.js';
import { writePlan } from '../src/ledger/write.js';
import { createShop } from '../src/shops/repository.js';
import { DAY_MS } from '../src/clock.js';
import { sweepInactiveBalances } from '../src/ledger/expiry.js';
import type { Benchmark } from './lib/benchmark.js';
import { benchShop, scratchDatabase, seedCustomers } from './lib/scratch.js';
import { mb, startServer } from './lib/server.js';

// `npm run bench -- ledger [sqlite|postgres]`: batches of 1000 grants over 10,000 customers
// sent over HTTP to a real server, against the ceiling of the same event rows inserted with
// plain multi-row INSERTs into the same database, without HTTP, and against the ledger's own
// ceiling: the planner's output for the same batches written by its writer alone (no HTTP, no
// JSON, no reads), in another shop of the same database.

const CUSTOMERS = 10_000;
const BATCH = 1000;
const WARMUP_BATCHES = 5;
/** Customers whose balance falls due in the inactivity sweep's figure, a few and many. */
const FEW_DUE = 250;
const MANY_DUE = 2000;
// SQLite serialises writes, so a few requests in flight keep it busy; PostgreSQL overlaps
// the reads of one batch with the writes of another, up to its pool of 10 connections.
const PLAN = {
  sqlite: { batches: 200, target: 50_000, inFlight: 4 },
  postgres: { batches: 100, target: 20_000, inFlight: 8 },
} as const;
type Dialect = keyof typeof PLAN;

/**
 * Events spread over every customer: batch b, element e goes to customer (b * 1000 + e) mod
 * 10,000 (so every tenth batch, each customer again). Grants only, or (mixed) one event in five
 * (one in five of each customer's) a deduction of 60 points, which consumes
 * a few of the customer's lots (grants average 50 points; the grant-only run before it leaves
 * every customer about 1,000).
 */
export function batchBody(b: number, mixed = false): string {
  const events = Array.from({ length: BATCH }, (_, e) => {
    const customer_identifier = String(((b * BATCH + e) % CUSTOMERS) + 1);
    if (mixed && (Math.floor(b / 10) + e) % 5 === 4)
      return { customer_identifier, source: 'manual', points_amount: -60, internal_note: `Deduction #${b * BATCH + e}` };
    return {
      customer_identifier,
      source: 'order',
      points_amount: 1 + ((b + e) % 100),
      ...(e % 4 === 0 ? { credits_amount: 0.25 } : {}),
      external_note: `Order #${b * BATCH + e}`,
    };
  });
  return JSON.stringify({ points_events: events });
}

async function sendBatches(url: string, token: string, bodies: string[], inFlight: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const res = await fetch(`${url}/merchant_api/v1/points_events/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      // The body is read but not decoded: the client's CPU is the server's on a small machine.
      if (res.status === 201) await res.arrayBuffer();
      else throw new Error(`batch answered ${res.status}: ${(await res.text()).slice(0, 500)}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

/** The same event rows, as a plain multi-row INSERT per 1000, one transaction each. */
async function ceiling(database: Database, shopId: number, batches: number, now: number): Promise<number> {
  const all: PointsEventsTable[][] = Array.from({ length: batches }, (_, b) =>
    Array.from({ length: BATCH }, (_, e) => ({
      shop_id: shopId,
      id: b * BATCH + e + 1,
      customer_remote_id: ((b * BATCH + e) % CUSTOMERS) + 1,
      source: 'order',
      points_amount: 1 + ((b + e) % 100),
      credits_amount: e % 4 === 0 ? 25 : 0,
      internal_note: null,
      external_note: `Order #${b * BATCH + e}`,
      custom_action_name: null,
      applied_at: now,
      expires_at: null,
      created_at: now,
      points_balance: 0,
      credits_balance: 0,
      reverses_event_id: null,
      redemption_id: null,
    })),
  );
  const started = performance.now();
  for (const rows of all) await transaction(database.db, (trx) => trx.insertInto('points_events').values(rows).execute());
  return (batches * BATCH) / ((performance.now() - started) / 1000);
}

/** The planner's plans of the same grant batches, written by the writer alone, one transaction each. */
async function writerCeiling(database: Database, shopId: number, batches: number, now: number): Promise<number> {
  const balances = new Map(Array.from({ length: CUSTOMERS }, (_, i) => [i + 1, NO_BALANCES]));
  const plans: LedgerPlan[] = Array.from({ length: batches }, (_, b) => {
    const postings = Array.from({ length: BATCH }, (_, e) =>
      posting(
        { remoteId: ((b * BATCH + e) % CUSTOMERS) + 1, email: null },
        { source: 'order', points: 1 + ((b + e) % 100), credits: e % 4 === 0 ? 25 : 0, externalNote: `Order #${b * BATCH + e}`, appliedAt: now },
      ),
    );
    return planPostings({ now, postings, balances, lots: new Map(), window: { from: 0, earnedSince: new Map() } });
  });
  const started = performance.now();
  for (const plan of plans) await transaction(database.db, (trx) => writePlan(trx, shopId, plan, now, { announced: false }));
  return (batches * BATCH) / ((performance.now() - started) / 1000);
}

/**
 * The inactivity sweep's cost per due customer, with `small` and then `large` of the shop's
 * customers due (each holding the same lots) and the rest not: constant when it reads only
 * what is due, off the index. Milliseconds per due customer.
 */
async function inactivityCost(database: Database, shopId: number, now: number, small: number, large: number): Promise<[number, number]> {
  const idle = now - 2 * DAY_MS;
  await database.db
    .updateTable('shops')
    .set({ points_expiry_mode: 'inactivity', points_inactivity_days: 1, points_inactivity_since: idle })
    .where('id', '=', shopId)
    .execute();
  const perCustomer = async (from: number, to: number) => {
    await database.db
      .updateTable('customers')
      .set({ points_active_at: idle })
      .where('shop_id', '=', shopId)
      .where('remote_id', '>=', from)
      .where('remote_id', '<=', to)
      .execute();
    const started = performance.now();
    await sweepInactiveBalances(database.db, now);
    return (performance.now() - started) / (to - from + 1);
  };
  return [await perCustomer(1, small), await perCustomer(small + 1, small + large)];
}

async function runDialect(dialect: Dialect): Promise<void> {
  const { batches, target, inFlight } = PLAN[dialect];
  const scratch = await scratchDatabase(dialect, 'ledger');
  const database = connect(scratch.url);
  try {
    const now = Date.now();
    const { token } = await benchShop(database, CUSTOMERS, now);
    const bodies = Array.from({ length: WARMUP_BATCHES + batches }, (_, b) => batchBody(b));
    const mixedBodies = Array.from({ length: batches }, (_, b) => batchBody(WARMUP_BATCHES + batches + b, true));

    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0' });
    const timed = async (list: string[]) => {
      const started = performance.now();
      await sendBatches(server.url, token, list, inFlight);
      return (list.length * BATCH) / ((performance.now() - started) / 1000);
    };
    let rate: number;
    let mixedRate: number;
    let rss = 0;
    try {
      await sendBatches(server.url, token, bodies.slice(0, WARMUP_BATCHES), inFlight);
      rate = await timed(bodies.slice(WARMUP_BATCHES));
      mixedRate = await timed(mixedBodies);
    } finally {
      rss = server.peakRss();
      await server.stop();
    }

    const other = await createShop(database.db, { name: 'Ceiling shop' }, now);
    const plain = await ceiling(database, other.id, batches, now);
    const writerShop = await createShop(database.db, { name: 'Writer ceiling shop' }, now);
    await seedCustomers(database, writerShop.id, CUSTOMERS, now);
    const written = await writerCeiling(database, writerShop.id, batches, now);
    const [fewDue, manyDue] = await inactivityCost(database, writerShop.id, now, FEW_DUE, MANY_DUE);
    const ratio = rate / plain;
    const writerRatio = rate / written;
    const mixedRatio = mixedRate / plain;
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const verdict = (value: number, min: number) => `(target ${min.toFixed(2)})  ${value >= min ? 'ok' : 'BELOW TARGET'}`;
    process.stdout.write(
      [
        `ledger on ${dialect}: ${f(batches * BATCH)} events in batches of ${BATCH}, ${CUSTOMERS.toLocaleString('en-US')} customers, ${inFlight} requests in flight`,
        `  grants over HTTP   ${f(rate).padStart(9)} events/s   (target ${f(target)})  ${rate >= target ? 'ok' : 'BELOW TARGET'}`,
        `  mixed over HTTP    ${f(mixedRate).padStart(9)} events/s   (one in five a deduction of a few lots)`,
        `  plain INSERT       ${f(plain).padStart(9)} rows/s     (ceiling, no HTTP)`,
        `  planned writes     ${f(written).padStart(9)} events/s   (ceiling: the planner's output, the writer alone, no HTTP)`,
        `  grants ratio       ${ratio.toFixed(2).padStart(9)}            ${verdict(ratio, 0.4)}`,
        `  grants / writer    ${writerRatio.toFixed(2).padStart(9)}            ${verdict(writerRatio, 0.6)}`,
        `  mixed ratio        ${mixedRatio.toFixed(2).padStart(9)}            ${verdict(mixedRatio, 0.3)}`,
        `  inactivity sweep   ${fewDue.toFixed(2).padStart(9)} ms per due customer (${FEW_DUE} of ${f(CUSTOMERS)} due, ${batches / 10} lots each), ${manyDue.toFixed(2)} ms (${f(MANY_DUE)} due): ratio ${(manyDue / fewDue).toFixed(2)}`,
        `  server peak RSS    ${mb(rss).padStart(9)}${dialect === 'sqlite' ? `             (target < 300 MB)  ${rss < 300 * 1024 * 1024 ? 'ok' : 'ABOVE TARGET'}` : ''}`,
        '',
      ].join('\n'),
    );
  } finally {
    await database.close();
    await scratch.drop();
  }
}

export const ledger: Benchmark = {
  description: 'Batches of 1000 grants over HTTP vs plain INSERT, on SQLite and PostgreSQL [sqlite|postgres]',
  async run(args) {
    const wanted = args.length > 0 ? args : ['sqlite', 'postgres'];
    for (const dialect of wanted) {
      if (!(dialect in PLAN)) throw new Error(`unknown database "${dialect}": use sqlite or postgres`);
      await runDialect(dialect as Dialect);
    }
  },
};
