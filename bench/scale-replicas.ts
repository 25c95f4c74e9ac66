import pg from 'pg';
import { connect } from '../src/db/connect.js';
import { benchShop, PG_ADMIN_URL, scratchDatabase } from './lib/scratch.js';
import { startServer, type ServerProcess } from './lib/server.js';
import { startStandby, type Standby } from './lib/standby.js';

// `npm run bench -- scale postgres`, part (b): read replicas. One hot standby of the machine's
// cluster (bench/lib/standby.ts), and the same server twice: on the primary alone, then with
// DATABASE_REPLICA_URLS naming the standby. Measured: cursor pages of 250 customers under 16
// requests in flight, and the cost a replica adds to a read after a write (PUT a customer, then
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
  /** Pages answered, and their latencies. */
  pages: number[];
  /** Pages shed (503 while the machine was saturated), sent again. */
  shed: number;
  putMs: number[];
  getMs: number[];
}

/** Cursor pages from random places, CONNECTIONS at a time for `seconds`: what a panel's reads look like. */
async function pages(server: ServerProcess, token: string, seconds: number, into: Pick<Measured, 'pages' | 'shed'>): Promise<void> {
  const until = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) {
      const since = Math.floor(Math.random() * (CUSTOMERS - PAGE));
      const started = performance.now();
      const res = await fetch(`${server.url}/merchant_api/v1/customers?pagination[limit]=${PAGE}&pagination[since_id]=${since}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.arrayBuffer();
      if (res.status === 503) {
        into.shed++;
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      if (res.status !== 200) throw new Error(`a page answered ${res.status}`);
      into.pages.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

/** One round: a PUT of a customer, then a GET of it with the PUT's Loyalty-Read-After, which must see it. */
async function readAfterWrite(server: ServerProcess, token: string, round: number, into: Measured): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const path = `${server.url}/merchant_api/v1/customers/${(round % CUSTOMERS) + 1}`;
  let started = performance.now();
  const put = await fetch(path, { method: 'PUT', headers, body: JSON.stringify({ first_name: `round-${round}` }) });
  await put.arrayBuffer();
  into.putMs.push(performance.now() - started);
  const after = put.headers.get('loyalty-read-after');
  started = performance.now();
  const got = await fetch(path, { headers: { authorization: headers.authorization, ...(after === null ? {} : { 'loyalty-read-after': after }) } });
  const body = (await got.json()) as { data: { first_name: string } };
  into.getMs.push(performance.now() - started);
  if (body.data.first_name !== `round-${round}`) throw new Error(`round ${round}: the read did not see its write`);
}

async function serve(url: string, replicaUrl: string | null, waitMs = 200): Promise<ServerProcess> {
  const env = {
    EXPIRY_SWEEP_INTERVAL_MS: '0',
    WEBHOOK_DELIVERY_INTERVAL_MS: '0',
    ...(replicaUrl === null ? {} : { DATABASE_REPLICA_URLS: replicaUrl, REPLICA_WAIT_MS: String(waitMs) }),
  };
  const server = await startServer(url, env);
  for (let i = 0; replicaUrl !== null; i++) {
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as { replicas?: { state: string }[] };
    if (ready.replicas?.[0]?.state === 'up') break;
    if (i > 200) throw new Error('the replica did not come up');
    await new Promise((r) => setTimeout(r, 50));
  }
  return server;
}

/**
 * Each server in turn, slice after slice and round after round, so that what else the machine
 * does at the time weighs on them alike.
 */
async function measure(servers: ServerProcess[], token: string): Promise<Measured[]> {
  const measured: Measured[] = servers.map(() => ({ pages: [], shed: 0, putMs: [], getMs: [] }));
  for (const server of servers) await pages(server, token, 1, { pages: [], shed: 0 }); // warm-up: JIT, caches, connections
  for (let slice = 0; slice < SECONDS; slice++) for (const [i, server] of servers.entries()) await pages(server, token, 1, measured[i]!);
  for (let round = 0; round < ROUNDS; round++) for (const [i, server] of servers.entries()) await readAfterWrite(server, token, round, measured[i]!);
  return measured;
}

const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Part (b) of the scale benchmark: its report's lines. */
export async function replicaReport(): Promise<string[]> {
  const scratch = await scratchDatabase('postgres', 'replicas');
  const database = connect(scratch.url);
  let standby: Standby | null = null;
  try {
    const { token } = await benchShop(database, CUSTOMERS, Date.now());
    standby = await startStandby(PG_ADMIN_URL);
    const replicaUrl = Object.assign(new URL(scratch.url), { port: String(standby.port) }).toString();
    await caughtUp(scratch.url, standby.url);
    const name = new URL(scratch.url).pathname.slice(1);
    // REPLICA_WAIT_MS=0: a read after a write the replica has not replayed at its first look reads the primary.
    const servers = [await serve(scratch.url, null), await serve(scratch.url, replicaUrl), await serve(scratch.url, replicaUrl, 0)];
    const before = await standbyReads(standby.url, name);
    let primary: Measured, replica: Measured, noWait: Measured;
    try {
      [primary, replica, noWait] = (await measure(servers, token)) as [Measured, Measured, Measured];
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
    // The standby's statistics reach pg_stat_database within a second of its backends' last transaction.
    await new Promise((r) => setTimeout(r, 1500));
    const served = (await standbyReads(standby.url, name)) - before;
    const ratio = (m: Measured) => percentile(m.getMs, 50) / percentile(primary.getMs, 50);
    const verdict = (m: Measured) => `${ratio(m).toFixed(2)}x the primary's p50   (target <= 1.3x)  ${ratio(m) <= 1.3 ? 'ok' : 'ABOVE TARGET'}`;
    const row = (label: string, m: Measured) =>
      `  ${label.padEnd(19)}  pages ${Math.round(m.pages.length / SECONDS)
        .toString()
        .padStart(5)}/s p50 ${ms(percentile(m.pages, 50))} p99 ${ms(percentile(m.pages, 99))}${m.shed > 0 ? ` (${m.shed} shed)` : ''}   ` +
      `PUT p50 ${ms(percentile(m.putMs, 50))}   GET after it p50 ${ms(percentile(m.getMs, 50))} p99 ${ms(percentile(m.getMs, 99))}`;
    return [
      `read replicas: ${CUSTOMERS.toLocaleString('en-US')} customers, the three servers in turn: cursor pages of ${PAGE} (${CONNECTIONS} in flight, ${SECONDS} slices of 1 s each); ${ROUNDS} rounds of PUT then GET with its Loyalty-Read-After`,
      row('primary alone', primary),
      row('one replica', replica),
      row('  REPLICA_WAIT_MS=0', noWait),
      `  reads the standby served: ${served.toLocaleString('en-US')} transactions (pages and GETs of both replica rows)`,
      `  read after write, one replica:        ${verdict(replica)}`,
      `  read after write, REPLICA_WAIT_MS=0:  ${verdict(noWait)}`,
      '  A read after a write waits for the standby to receive, fsync and replay it (2 ms at the median here, more',
      '  while the disk is busy); with REPLICA_WAIT_MS=0 such a read goes to the primary after one look instead.',
      '  On this 2-core machine the standby, the primary, the server and the load share the same cores and disk: a replica',
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
