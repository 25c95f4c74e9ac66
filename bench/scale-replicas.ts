import pg from 'pg';
import { connect } from '../src/db/connect.js';
import { benchShop, PG_ADMIN_URL, scratchDatabase } from './lib/scratch.js';
import { startServer, type ServerProcess } from './lib/server.js';
import { startStandby, type Standby } from './lib/standby.js';
import { wrk, wrkAvailable } from './lib/wrk.js';

// `npm run bench -- scale postgres`, part (b): read replicas. One hot standby of the machine's
// cluster (bench/lib/standby.ts), and the same server twice: on the primary alone, then with
// DATABASE_REPLICA_URLS naming the standby. Measured: cursor pages of 250 customers under 16
// connections (wrk), and the cost a replica adds to a read after a write (PUT a customer, then
// GET it with the write's Loyalty-Read-After, one after the other), against the primary alone.

const CUSTOMERS = 20_000;
const PAGE = 250;
const SECONDS = 10;
const CONNECTIONS = 16;
const ROUNDS = 300;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function one<T>(url: string, text: string, values: unknown[] = []): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows[0] as T;
  } finally {
    await client.end();
  }
}

/** Waits until the standby has replayed everything the primary had written when asked. */
async function caughtUp(primaryUrl: string, standbyUrl: string): Promise<void> {
  const { lsn } = await one<{ lsn: string }>(primaryUrl, 'select pg_current_wal_lsn()::text as lsn');
  for (let i = 0; i < 600; i++) {
    if ((await one<{ ok: boolean }>(standbyUrl, 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [lsn])).ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the standby did not catch up in 30 s');
}

/** Transactions the standby's backends committed in the database: reads it served. */
async function standbyReads(standbyUrl: string, database: string): Promise<number> {
  return Number((await one<{ n: string }>(standbyUrl, 'select xact_commit as n from pg_stat_database where datname = $1', [database])).n);
}

interface Measured {
  pages: Awaited<ReturnType<typeof wrk>>;
  putMs: number[];
  getMs: number[];
}

async function readAfterWrite(server: ServerProcess, token: string): Promise<{ putMs: number[]; getMs: number[] }> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const putMs: number[] = [];
  const getMs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const path = `${server.url}/merchant_api/v1/customers/${(i % CUSTOMERS) + 1}`;
    let started = performance.now();
    const put = await fetch(path, { method: 'PUT', headers, body: JSON.stringify({ first_name: `round-${i}` }) });
    await put.arrayBuffer();
    putMs.push(performance.now() - started);
    const after = put.headers.get('loyalty-read-after');
    started = performance.now();
    const got = await fetch(path, { headers: { authorization: headers.authorization, ...(after === null ? {} : { 'loyalty-read-after': after }) } });
    const body = (await got.json()) as { data: { first_name: string } };
    getMs.push(performance.now() - started);
    if (body.data.first_name !== `round-${i}`) throw new Error(`round ${i}: the read did not see its write`);
  }
  return { putMs, getMs };
}

async function measure(url: string, token: string, replicaUrl: string | null): Promise<Measured> {
  const env = { EXPIRY_SWEEP_INTERVAL_MS: '0', WEBHOOK_DELIVERY_INTERVAL_MS: '0', ...(replicaUrl === null ? {} : { DATABASE_REPLICA_URLS: replicaUrl }) };
  const server = await startServer(url, env);
  try {
    if (replicaUrl !== null) {
      for (let i = 0; ; i++) {
        const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { replicas?: { state: string }[] };
        if (ready.replicas?.[0]?.state === 'up') break;
        if (i > 200) throw new Error('the replica did not come up');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const path = `"/merchant_api/v1/customers?pagination[limit]=${PAGE}&pagination[since_id]=" .. math.random(0, ${CUSTOMERS - PAGE})`;
    const pages = await wrk(server.url, token, path, SECONDS, CONNECTIONS, { warmupSeconds: 2, pid: server.child.pid });
    return { pages, ...(await readAfterWrite(server, token)) };
  } finally {
    await server.stop();
  }
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Part (b) of the scale benchmark: its report's lines. */
export async function replicaReport(): Promise<string[]> {
  if (!wrkAvailable()) return ['  read replicas      not measured: wrk is not installed (apt-get install wrk)'];
  const scratch = await scratchDatabase('postgres', 'replicas');
  const database = connect(scratch.url);
  let standby: Standby | null = null;
  try {
    const { token } = await benchShop(database, CUSTOMERS, Date.now());
    standby = await startStandby(PG_ADMIN_URL);
    const replicaUrl = Object.assign(new URL(scratch.url), { port: String(standby.port) }).toString();
    await caughtUp(scratch.url, standby.url);
    const primary = await measure(scratch.url, token, null);
    const name = new URL(scratch.url).pathname.slice(1);
    const before = await standbyReads(standby.url, name);
    const replica = await measure(scratch.url, token, replicaUrl);
    // The standby's statistics reach pg_stat_database within a second of its backends' last transaction.
    await new Promise((r) => setTimeout(r, 1500));
    const served = (await standbyReads(standby.url, name)) - before;
    const ratio = percentile(replica.getMs, 50) / percentile(primary.getMs, 50);
    const row = (label: string, m: Measured) =>
      `  ${label.padEnd(17)}  pages ${Math.round(m.pages.rps).toString().padStart(5)}/s p50 ${ms(m.pages.p50Ms)} p99 ${ms(m.pages.p99Ms)}   ` +
      `PUT p50 ${ms(percentile(m.putMs, 50))}   GET after it p50 ${ms(percentile(m.getMs, 50))} p99 ${ms(percentile(m.getMs, 99))}`;
    return [
      `read replicas: ${CUSTOMERS.toLocaleString('en-US')} customers, cursor pages of ${PAGE} (wrk, ${CONNECTIONS} connections, ${SECONDS} s); ${ROUNDS} rounds of PUT then GET with its Loyalty-Read-After`,
      row('primary alone', primary),
      row('one replica', replica),
      `  reads the standby served: ${served.toLocaleString('en-US')} transactions`,
      `  read after write with a replica: ${ratio.toFixed(2)}x the primary's p50   (target <= 1.3x)  ${ratio <= 1.3 ? 'ok' : 'ABOVE TARGET'}`,
      '  On this 2-core machine the standby, the primary, the server and wrk share the same cores and disk: a replica',
      '  moves reads off the primary but adds no CPU, so pages/s here show its overhead, not the throughput it adds;',
      '  replicas add read throughput only on cores or hosts of their own, which one machine cannot show.',
      '',
    ];
  } finally {
    await standby?.close();
    await database.close();
    await scratch.drop();
  }
}
