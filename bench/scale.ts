import { sql } from 'kysely';
import { connect } from '../src/db/connect.js';
import { streamBacklog } from '../src/events/stream.js';
import type { Benchmark } from './lib/benchmark.js';
import { startNats } from './lib/nats.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { startServer } from './lib/server.js';
import { replicaReport } from './scale-replicas.js';

// `npm run bench -- scale [sqlite|postgres]`: the event stream's relay under the ledger
// benchmark's write load (batches of 1000 grants over 10,000 customers, each grant one
// points_event.created event), to a JetStream server of its own. It reports the time from an
// event's transaction to the stream's acknowledgement (created_at to published_at, both stored:
// an upper bound, since the transaction commits after its created_at and the mark follows the
// acknowledgement), events published per second against events committed per second, and the
// largest backlog seen.

const CUSTOMERS = 10_000;
const BATCH = 1000;
const PLAN = {
  sqlite: { batches: 60, inFlight: 4 },
  postgres: { batches: 40, inFlight: 8 },
} as const;
type Dialect = keyof typeof PLAN;

function batchBody(b: number): string {
  const events = Array.from({ length: BATCH }, (_, e) => ({
    customer_identifier: String(((b * BATCH + e) % CUSTOMERS) + 1),
    source: 'order',
    points_amount: 1 + ((b + e) % 100),
  }));
  return JSON.stringify({ points_events: events });
}

async function send(url: string, token: string, bodies: string[], inFlight: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      let res: Response;
      // A batch shed while the server is saturated (503, Retry-After) is sent again.
      while (
        (res = await fetch(`${url}/merchant_api/v1/points_events/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
        })).status === 503
      )
        await new Promise((r) => setTimeout(r, 100));
      if (res.status !== 201) throw new Error(`batch answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function runDialect(dialect: Dialect): Promise<void> {
  const { batches, inFlight } = PLAN[dialect];
  const nats = await startNats();
  const scratch = await scratchDatabase(dialect, 'scale');
  const database = connect(scratch.url);
  try {
    const now = Date.now();
    const { token } = await benchShop(database, CUSTOMERS, now);
    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0', EVENT_STREAM_URL: nats.url });
    let maxBacklog = 0;
    const sampler = setInterval(() => {
      void streamBacklog(database.db).then((n) => (maxBacklog = Math.max(maxBacklog, n)));
    }, 200);
    const started = Date.now();
    let committedMs = 0;
    try {
      await send(
        server.url,
        token,
        Array.from({ length: batches }, (_, b) => batchBody(b)),
        inFlight,
      );
      committedMs = Date.now() - started;
      const deadline = Date.now() + 120_000;
      while ((await streamBacklog(database.db)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    } finally {
      clearInterval(sampler);
      await server.stop();
    }
    const { rows } = await sql<{ created_at: number; published_at: number | null }>`select created_at, published_at from stream_events`.execute(database.db);
    const published = rows.filter((r) => r.published_at !== null);
    const lags = published.map((r) => Number(r.published_at) - Number(r.created_at)).sort((a, b) => a - b);
    const firstCreated = Math.min(...rows.map((r) => Number(r.created_at)));
    const lastPublished = Math.max(...published.map((r) => Number(r.published_at)));
    const committedRate = rows.length / (committedMs / 1000);
    const publishedRate = published.length / ((lastPublished - firstCreated) / 1000);
    const p99 = percentile(lags, 99);
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    process.stdout.write(
      [
        `scale on ${dialect}: ${f(rows.length)} events (${batches} batches of ${BATCH} grants, ${inFlight} in flight), relay in the serving process, JetStream on this machine`,
        `  commit -> ack      p50 ${f(percentile(lags, 50))} ms, p99 ${f(p99)} ms, max ${f(lags.at(-1) ?? 0)} ms   (target p99 < 1000 ms)  ${p99 < 1000 ? 'ok' : 'ABOVE TARGET'}`,
        `  committed          ${f(committedRate).padStart(9)} events/s`,
        `  published          ${f(publishedRate).padStart(9)} events/s   (first commit to last acknowledgement)  ${published.length === rows.length ? 'every event' : `ONLY ${f(published.length)}`}`,
        `  largest backlog    ${f(maxBacklog).padStart(9)} events    (sampled every 200 ms)`,
        '',
      ].join('\n'),
    );
  } finally {
    await database.close();
    await scratch.drop();
    await nats.close();
  }
}

export const scale: Benchmark = {
  description:
    "The event stream relay's lag and rate under the ledger's write load; on postgres, read replicas' pages and read-after-write cost [sqlite|postgres|replicas]",
  async run(args) {
    const wanted = args.length > 0 ? args : ['sqlite', 'postgres'];
    for (const dialect of wanted) {
      // `scale replicas`: part (b) alone.
      if (dialect === 'replicas') {
        process.stdout.write(`${(await replicaReport()).join('\n')}\n`);
        continue;
      }
      if (!(dialect in PLAN)) throw new Error(`unknown database "${dialect}": use sqlite, postgres or replicas`);
      await runDialect(dialect as Dialect);
      // (b) Read replicas: PostgreSQL only (bench/scale-replicas.ts).
      if (dialect === 'postgres') process.stdout.write(`${(await replicaReport()).join('\n')}\n`);
    }
  },
};
