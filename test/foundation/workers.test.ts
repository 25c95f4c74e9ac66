import { execFile } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN, type ServerProcess } from '../../bench/lib/server.js';
import { API } from '../helpers/app.js';
import type { CliResult } from '../helpers/cli.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, seedShop, start } from '../helpers/server.js';

// `loyalty serve --workers N` (WORKERS): a primary that migrates once and forks N processes
// sharing the port, which run the jobs side by side, answer /metrics for all, and stop together.

const receivers: http.Server[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await new Promise((resolve) => receiver.close(resolve));
});

/** The process ids of a process's children (Linux /proc). */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return fs.readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1]!.split(' ')[1] === String(pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** How many processes of a server logged that they listen (it runs with LOG_LEVEL=info). */
const listening = (server: ServerProcess): number =>
  new Set(
    server
      .output()
      .stdout.split('\n')
      .filter((line) => line.includes('Server listening'))
      .map((line) => JSON.parse(line).pid),
  ).size;

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`);

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The status of a GET sent on a connection opened for it alone. */
function statusOnNewConnection(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        res.resume().on('end', () => resolve(res.statusCode!));
      })
      .on('error', reject);
  });
}

const exited = (server: ServerProcess) =>
  server.child.exitCode !== null ? Promise.resolve(server.child.exitCode) : once(server.child, 'exit').then(([code]) => code as number);

function loyalty(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env }, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe(`loyalty serve --workers (${TEST_DIALECT})`, () => {
  it('migrates a new database once, serves from two processes, sums /metrics over them, and stops them all on SIGTERM', async () => {
    const url = await freshDatabase();
    const server = await start(url, { WORKERS: '2' }, { capture: true });
    await until('two workers run', () => childrenOf(server.child.pid!).length === 2);
    const workers = childrenOf(server.child.pid!);
    expect(JSON.parse((await loyalty({ DATABASE_URL: url }, 'migrate', '--dry-run', '--json')).stdout)).toEqual({ pending: [] });

    // Connections are handed to the workers in turn; the count is of every one of them.
    for (let i = 0; i < 20; i++) expect((await fetch(`${server.url}/healthz`, { headers: { connection: 'close' } })).status).toBe(200);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('http_requests_total{method="GET",route="/healthz",status_code="200"} 20');

    server.child.kill('SIGTERM');
    expect(await exited(server)).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
  });

  it('replaces a worker that dies, and keeps serving meanwhile', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const server = await start(url, {}, { capture: true });
    // The one-process server first: WORKERS unset serves in one process, with no children (but
    // for a moment the helper that duplicates its listening socket: http/accept.ts).
    await until('the one process has no children', () => childrenOf(server.child.pid!).length === 0);
    await server.stop();

    const clustered = await start(url, { WORKERS: '2', LOG_LEVEL: 'info' }, { capture: true });
    await until('two workers listen', () => listening(clustered) === 2);
    const [victim] = childrenOf(clustered.child.pid!);
    process.kill(victim!, 'SIGKILL');
    // A connection handed to the worker as it is killed is lost with it; once the primary has
    // seen it exit, the other worker takes every connection while the replacement starts.
    await until('the primary reaps the killed worker', () => !childrenOf(clustered.child.pid!).includes(victim!));
    // On a connection of its own: fetch's pool may still hold the keep-alive connection its
    // readiness polls opened to the killed worker.
    expect(await statusOnNewConnection(`${clustered.url}${API}/shop`, { authorization: `Bearer ${token}` })).toBe(200);
    await until('a new worker replaces it', () => {
      const now = childrenOf(clustered.child.pid!);
      return now.length === 2 && !now.includes(victim!);
    });
    await clustered.stop();
  });

  it('delivers each webhook once while every worker runs the delivery job', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const deliveries: string[] = [];
    const receiver = http.createServer((req, res) => {
      deliveries.push(String(req.headers['loyalty-delivery-id']));
      req.resume().on('end', () => res.writeHead(204).end());
    });
    receivers.push(receiver);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const server = await start(
      url,
      { WORKERS: '2', WEBHOOK_DELIVERY_INTERVAL_MS: '20', WEBHOOK_BATCH_SIZE: '3', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
      { capture: true },
    );
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${server.url}${API}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const hook = await call('POST', '/webhooks', { topic: 'customer.created', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
    expect(hook.status).toBe(201);
    for (let id = 1; id <= 40; id++) expect((await call('PUT', `/customers/${id}`, { email: `c${id}@example.com` })).status).toBe(201);

    await until('40 deliveries arrive', () => deliveries.length >= 40);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(deliveries).toHaveLength(40);
    expect(new Set(deliveries).size).toBe(40);
    await server.stop();
  });

  it('starts one worker per core with --workers auto, which WORKERS does not override', async () => {
    const url = await freshDatabase();
    const server = await start(url, { WORKERS: '1' }, { capture: true, args: ['--workers', 'auto'] });
    await until('a worker per core runs', () => childrenOf(server.child.pid!).length === os.availableParallelism());
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.stop();
  });

  it('refuses a count of workers that is not one, with exit 2', async () => {
    const url = await freshDatabase();
    for (const [env, args, message] of [
      [{ WORKERS: '0' }, [], 'WORKERS must be a number of processes from 1 to 64, or auto; got "0"'],
      [{}, ['--workers', 'many'], '--workers must be a number of processes from 1 to 64, or auto; got "many"'],
    ] as const) {
      const result = await loyalty({ DATABASE_URL: url, ...env }, 'serve', ...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`error: ${message}\n`);
    }
  });

  it('stops, exit 1, when its workers cannot listen (the port is taken), instead of restarting them forever', async () => {
    const url = await freshDatabase();
    const taken = http.createServer();
    receivers.push(taken);
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    const result = await loyalty({ DATABASE_URL: url, WORKERS: '2', PORT: port, HOST: '127.0.0.1', LOYALTY_BOOTSTRAP: 'false' }, 'serve');
    expect(result.code).toBe(1);
  });

  it('stops, exit 1 and says why, when a worker does not listen within WORKER_START_TIMEOUT_MS, instead of waiting for it', async () => {
    const url = await freshDatabase();
    // No worker starts in 200 ms (loading and building the app alone take longer).
    const result = await loyalty(
      { DATABASE_URL: url, WORKERS: '2', PORT: '0', HOST: '127.0.0.1', LOYALTY_BOOTSTRAP: 'false', WORKER_START_TIMEOUT_MS: '200', LOG_LEVEL: 'error' },
      'serve',
    );
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain('a worker did not listen in time (WORKER_START_TIMEOUT_MS); stopping');
  });
});
