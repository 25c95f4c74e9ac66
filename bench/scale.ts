import { sql } from 'kysely';
import { connect, type Database } from '../src/db/connect.js';
import { streamBacklog } from '../src/events/stream.js';
import type { Benchmark } from './lib/benchmark.js';
import { batchBody } from './ledger.js';
import { barePublishRate, startNats } from './lib/nats.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { startServer } from './lib/server.js';
import { replicaReport } from './scale-replicas.js';

// `npm run bench -- scale [sqlite|postgres]`: the event stream's relay under the ledger
// benchmark's write load (its batches of 1000 grants over 10,000 customers, as many in flight;
// each grant one points_event.created event), to a JetStream server of its own. It reports the
// time from an event's commit to the stream's acknowledgement: the commit as seen by polling the
// shop's largest event id every 20 ms (ids commit in order within a shop), so each lag is at
// most that short of its true value, and published_at, stored by the relay once the
// acknowledgement came. Beside it the time from the transaction's start (created_at), an upper
// bound: a batch of 1000 commits a while after it starts, longer when it queues for the shop's
// id lock. Then events published per second against events committed per second, the largest
// backlog seen, and a reference measured in the same run: what a bare JetStream publisher (the
// client's publish, in windows of 1000 acknowledgements, nothing else running) reaches on this
// machine.

const CUSTOMERS = 10_000;
const BATCH = 1000;
const COMMIT_POLL_MS = 20;
const PLAN = {
  sqlite: { batches: 60, inFlight: 4 },
  postgres: { batches: 40, inFlight: 8 },
} as const;
type Dialect = keyof typeof PLAN;

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

/** When each of the shop's events became visible: its largest event id, polled every COMMIT_POLL_MS. */
function watchCommits(db: Database['db'], shopId: number): { stop(): Promise<(id: number) => number> } {
  const seen: [at: number, maxId: number][] = [];
  let stopped = false;
  const polling = (async () => {
    while (!stopped) {
      const { rows } = await sql<{ m: number | null }>`select max(id) as m from stream_events where shop_id = ${shopId}`.execute(db);
      const maxId = Number(rows[0]?.m ?? 0);
      if (maxId > (seen.at(-1)?.[1] ?? 0)) seen.push([Date.now(), maxId]);
      await new Promise((r) => setTimeout(r, COMMIT_POLL_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await polling;
      // The first poll that saw the id: binary search over the ascending maxima.
      return (id: number) => {
        let lo = 0;
        let hi = seen.length - 1;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (seen[mid]![1] >= id) hi = mid;
          else lo = mid + 1;
        }
        return seen[lo]![0];
      };
    },
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function runDialect(dialect: Dialect): Promise<void> {
  const { batches, inFlight } = PLAN[dialect];
  const nats = await startNats();
  const scratch = await scratchDatabase(dialect, 'scale');
  const database = connect(scratch.url);
  try {
    const now = Date.now();
    const { shop, token } = await benchShop(database, CUSTOMERS, now);
    const bare = await barePublishRate(nats.url, 20_000, 500);
    const server = await startServer(scratch.url, { EXPIRY_SWEEP_INTERVAL_MS: '0', EVENT_STREAM_URL: nats.url });
    let maxBacklog = 0;
    const sampler = setInterval(() => {
      void streamBacklog(database.db).then((n) => (maxBacklog = Math.max(maxBacklog, n)));
    }, 200);
    const commits = watchCommits(database.db, shop.id);
    let seenAt: (id: number) => number = () => 0;
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
      seenAt = await commits.stop();
      await server.stop();
    }
    const { rows } = await sql<{ id: number; created_at: number; published_at: number | null }>`select id, created_at, published_at from stream_events`.execute(
      database.db,
    );
    const published = rows.filter((r) => r.published_at !== null);
    const lags = published.map((r) => Number(r.published_at) - seenAt(Number(r.id))).sort((a, b) => a - b);
    const sinceStart = published.map((r) => Number(r.published_at) - Number(r.created_at)).sort((a, b) => a - b);
    const firstCreated = Math.min(...rows.map((r) => Number(r.created_at)));
    const lastPublished = Math.max(...published.map((r) => Number(r.published_at)));
    const committedRate = rows.length / (committedMs / 1000);
    const publishedRate = published.length / ((lastPublished - firstCreated) / 1000);
    const p99 = percentile(lags, 99);
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    process.stdout.write(
      [
        `scale on ${dialect}: ${f(rows.length)} events (${batches} batches of ${BATCH} grants, ${inFlight} in flight), relay in the serving process, JetStream on this machine`,
        `  commit -> ack      p50 ${f(percentile(lags, 50))} ms, p99 ${f(p99)} ms, max ${f(lags.at(-1) ?? 0)} ms   (target p99 < 1000 ms, commits seen within ${COMMIT_POLL_MS} ms)  ${p99 + COMMIT_POLL_MS < 1000 ? 'ok' : 'ABOVE TARGET'}`,
        `  start -> ack       p50 ${f(percentile(sinceStart, 50))} ms, p99 ${f(percentile(sinceStart, 99))} ms   (from the transaction's start: an upper bound)`,
        `  committed          ${f(committedRate).padStart(9)} events/s`,
        `  published          ${f(publishedRate).padStart(9)} events/s   (first commit to last acknowledgement)  ${published.length === rows.length ? 'every event' : `ONLY ${f(published.length)}`}`,
        `  largest backlog    ${f(maxBacklog).padStart(9)} events    (sampled every 200 ms)`,
        `  bare publisher     ${f(bare).padStart(9)} events/s   (reference: JetStream alone on this machine, before the load)`,
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
