import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandby, type Standby } from '../../bench/lib/standby.js';
import { createLoyaltyClient } from '../../client/src/index.js';
import type { ServerProcess } from '../../bench/lib/server.js';
import { loadConfig, ConfigError } from '../../src/config.js';
import { API, setup } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, seedShop, start } from '../helpers/server.js';

// Read replicas (DESIGN 18, docs/scaling.md) against a real hot standby of the test cluster,
// started here (bench/lib/standby.ts) and served through `loyalty serve` processes.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('read replicas: the one-machine default', () => {
  it('writes carry no Loyalty-Read-After without replicas, and SQLite refuses DATABASE_REPLICA_URLS', async () => {
    const t = await setup();
    try {
      const res = await t.request('PUT', `${API}/customers/1`, { body: { email: 'a@example.com' } });
      expect(res.statusCode).toBeLessThan(300);
      expect(res.headers['loyalty-read-after']).toBeUndefined();
      expect(t.database.replicas).toBeNull();
    } finally {
      await t.close();
    }
    expect(() => loadConfig({ DATABASE_URL: 'sqlite:./x.db', DATABASE_REPLICA_URLS: 'postgres://127.0.0.1:5433/x' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x', DATABASE_REPLICA_URLS: 'mysql://x' })).toThrow(/postgres:\/\//);
    expect(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x', DATABASE_REPLICA_URLS: ' postgres://a/x, postgres://b/x ' }).replicas).toEqual({
      urls: ['postgres://a/x', 'postgres://b/x'],
      waitMs: 200,
      maxLagMs: 5000,
    });
  });
});

const postgres = TEST_DIALECT === 'postgres';
if (!postgres) process.stderr.write('read replicas over a hot standby: skipped, PostgreSQL only (set TEST_DATABASE_URL)\n');

describe.skipIf(!postgres)('read replicas over a hot standby (PostgreSQL)', () => {
  let standby: Standby;
  beforeAll(async () => {
    standby = await startStandby(process.env.TEST_DATABASE_URL!);
  });
  afterAll(async () => {
    await standby?.close();
  });

  /** The test database's URL on the standby. */
  const onStandby = (url: string) => Object.assign(new URL(url), { hostname: '127.0.0.1', port: String(standby.port) }).toString();

  async function serverPair(count: number, env: Record<string, string> = {}): Promise<{ servers: ServerProcess[]; token: string }> {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const replicaEnv = { DATABASE_REPLICA_URLS: onStandby(url), ...env };
    const servers = await Promise.all(Array.from({ length: count }, () => start(url, replicaEnv, { capture: true })));
    return { servers, token };
  }

  const call = async (server: ServerProcess, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.url}${API}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, after: res.headers.get('loyalty-read-after'), body: (await res.json()) as { data: Record<string, unknown> } };
  };
  const readyz = async (server: ServerProcess) =>
    (await (await fetch(`${server.url}/readyz`)).json()) as { replicas?: { name: string; state: string; lag_ms: number }[] };
  const until = async (what: string, check: () => Promise<boolean>, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
      await sleep(50);
    }
  };
  const replicaUp = (server: ServerProcess) => async () => (await readyz(server)).replicas?.[0]?.state === 'up';

  it('reads its writes 200 times in a row, with the header and, within one process, without it', async () => {
    const { servers, token } = await serverPair(1);
    const [server] = servers as [ServerProcess];
    await until('the replica serves reads', replicaUp(server));
    for (let i = 0; i < 200; i++) {
      const put = await call(server, token, 'PUT', '/customers/1', { first_name: `with-${i}` });
      expect(put.status).toBeLessThan(300);
      expect(put.after).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      const got = await call(server, token, 'GET', '/customers/1', undefined, { 'loyalty-read-after': put.after! });
      expect(got.body.data.first_name).toBe(`with-${i}`);
    }
    for (let i = 0; i < 200; i++) {
      expect((await call(server, token, 'PUT', '/customers/1', { first_name: `own-${i}` })).status).toBeLessThan(300);
      expect((await call(server, token, 'GET', '/customers/1')).body.data.first_name).toBe(`own-${i}`);
    }
    // Reports and exports read from the replica too (an export streams from its pool after the handler).
    expect((await call(server, token, 'GET', '/reports/programme')).status).toBe(200);
    const csv = await fetch(`${server.url}${API}/exports/customers.csv`, { headers: { authorization: `Bearer ${token}` } });
    expect(csv.status).toBe(200);
    expect(await csv.text()).toContain('own-199');
    const [replica] = (await readyz(server)).replicas!;
    expect(replica).toMatchObject({ name: `127.0.0.1:${standby.port}`, state: 'up' });
  });

  it('serves reads from the standby: with its replay paused a read without the header sees the old data, one with it waits, then reads the primary; past REPLICA_MAX_LAG_MS it is left out', async () => {
    const waitMs = 300;
    const { servers, token } = await serverPair(2, { REPLICA_WAIT_MS: String(waitMs), REPLICA_MAX_LAG_MS: '1500' });
    const [writer, reader] = servers as [ServerProcess, ServerProcess];
    await until('both serve reads from the replica', async () => (await replicaUp(writer)()) && (await replicaUp(reader)()));
    const first = await call(writer, token, 'PUT', '/customers/1', { first_name: 'before' });
    expect((await call(reader, token, 'GET', '/customers/1', undefined, { 'loyalty-read-after': first.after! })).body.data.first_name).toBe('before');
    await standby.pauseReplay();
    try {
      const second = await call(writer, token, 'PUT', '/customers/1', { first_name: 'after' });
      // Another process, no header: the standby answers, as it was.
      expect((await call(reader, token, 'GET', '/customers/1')).body.data.first_name).toBe('before');
      // With the header: no replica has replayed it; after REPLICA_WAIT_MS the primary answers.
      let started = performance.now();
      expect((await call(reader, token, 'GET', '/customers/1', undefined, { 'loyalty-read-after': second.after! })).body.data.first_name).toBe('after');
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(waitMs - 5);
      expect(waited).toBeLessThan(waitMs + 1500);
      // The writing process remembers its write to the shop: no header needed.
      started = performance.now();
      expect((await call(writer, token, 'GET', '/customers/1')).body.data.first_name).toBe('after');
      expect(performance.now() - started).toBeGreaterThanOrEqual(waitMs - 5);
      // The typed client behind a "load balancer" that sends writes to one process and reads to
      // the other: it sends back the newest token it has seen, so it reads its write.
      const sent: (string | null)[] = [];
      const client = createLoyaltyClient({
        baseUrl: 'http://balancer',
        token,
        fetch: (input, init) => {
          if ((init.method ?? 'GET') === 'GET') sent.push(new Headers(init.headers).get('loyalty-read-after'));
          return fetch(input.replace('http://balancer', (init.method ?? 'GET') === 'GET' ? reader.url : writer.url), init);
        },
      });
      await client.PUT(`${API}/customers/{customer_identifier}`, { params: { path: { customer_identifier: 1 } }, body: { first_name: 'typed' } });
      const typed = await client.GET(`${API}/customers/{customer_identifier}`, { params: { path: { customer_identifier: '1' } } });
      expect(typed.data.first_name).toBe('typed');
      expect(sent).toEqual([expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/)]);
      // A header that is no position this server gave reads the primary at once.
      expect((await call(reader, token, 'GET', '/customers/1', undefined, { 'loyalty-read-after': 'not-a-position' })).body.data.first_name).toBe('typed');
      // Further behind than REPLICA_MAX_LAG_MS: left out, so even a read without the header reads the primary.
      await until('/readyz shows the replica lagging', async () => (await readyz(reader)).replicas?.[0]?.state === 'lagging');
      expect((await call(reader, token, 'GET', '/customers/1')).body.data.first_name).toBe('typed');
    } finally {
      await standby.resumeReplay();
    }
    await until('the reader sees the write from the replica', async () => (await call(reader, token, 'GET', '/customers/1')).body.data.first_name === 'typed');
  });

  it('reads from the primary while the standby is stopped, shows it down, and takes it back by itself; /metrics shows its lag', async () => {
    const { servers, token } = await serverPair(1);
    const [server] = servers as [ServerProcess];
    await until('the replica serves reads', replicaUp(server));
    await call(server, token, 'PUT', '/customers/1', { first_name: 'kept' });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^loyalty_replica_lag_seconds\\{replica="127.0.0.1:${standby.port}"\\} \\d`, 'm'));
    expect(metrics).toMatch(new RegExp(`^loyalty_replica_up\\{replica="127.0.0.1:${standby.port}"\\} 1$`, 'm'));
    await standby.stop();
    try {
      for (let i = 0; i < 20; i++) {
        const got = await call(server, token, 'GET', '/customers/1');
        expect(got.status).toBe(200);
        expect(got.body.data.first_name).toBe('kept');
      }
      await until('/readyz shows the replica down', async () => (await readyz(server)).replicas?.[0]?.state === 'down');
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(await (await fetch(`${server.url}/metrics`)).text()).toMatch(new RegExp(`^loyalty_replica_up\\{replica="127.0.0.1:${standby.port}"\\} 0$`, 'm'));
    } finally {
      await standby.start();
    }
    await until('the replica is taken back', replicaUp(server), 15_000);
    expect((await call(server, token, 'GET', '/customers/1')).body.data.first_name).toBe('kept');
  });
});
