import { execFile } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../../bench/lib/server.js';
import { connect, parseDatabaseUrl } from '../../src/db/connect.js';
import { countShops } from '../../src/shops/repository.js';
import { API } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, seedShop, start } from '../helpers/server.js';

// `loyalty serve` as a real process: first run, graceful shutdown, and kill -9.

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const exited = (server: ServerProcess): Promise<{ code: number | null; signal: string | null }> =>
  server.child.exitCode !== null || server.child.signalCode !== null
    ? Promise.resolve({ code: server.child.exitCode, signal: server.child.signalCode })
    : once(server.child, 'exit').then(([code, signal]) => ({ code, signal }));

describe(`first run (${TEST_DIALECT})`, () => {
  it('creates ./data/loyalty.db, a demo shop, and prints a curl line that works as printed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-first-run-'));
    dirs.push(dir);
    const server = await start(null, { LOYALTY_BOOTSTRAP: 'true' }, { capture: true, cwd: dir });
    const stdout = server.output().stdout;
    const token = /^\s+(lty_[\w-]{43})$/m.exec(stdout)?.[1];
    const curl = /^\s+(curl .+)$/m.exec(stdout)?.[1];
    expect(token, stdout).toBeDefined();
    expect(curl).toBe(`curl -H "Authorization: Bearer ${token}" ${server.url}/merchant_api/v1/shop`);

    const { stdout: answer } = await new Promise<{ stdout: string }>((resolve, reject) =>
      execFile('bash', ['-c', curl!], (error, out) => (error ? reject(error) : resolve({ stdout: out }))),
    );
    expect(JSON.parse(answer).data).toMatchObject({ name: 'Demo shop', points_expiry_days: 365 });

    const file = path.join(dir, 'data', 'loyalty.db');
    expect(fs.existsSync(file)).toBe(true);
    await server.stop();
    const sqlite = new BetterSqlite3(file, { readonly: true });
    try {
      expect(sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      sqlite.close();
    }

    // A second start finds the shop and prints no new token.
    const again = await start(null, { LOYALTY_BOOTSTRAP: 'true' }, { capture: true, cwd: dir });
    expect(again.output().stdout).not.toMatch(/lty_/);
  });

  it('creates nothing and prints no token with LOYALTY_BOOTSTRAP=false', async () => {
    const url = await freshDatabase();
    const server = await start(url, { LOYALTY_BOOTSTRAP: 'false', LOG_LEVEL: 'info' }, { capture: true });
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(server.output().stdout).not.toMatch(/lty_|curl/);
    await server.stop();
    const database = connect(url);
    try {
      expect(await countShops(database.db)).toBe(0);
    } finally {
      await database.close();
    }
  });
});

describe(`shutdown (${TEST_DIALECT})`, () => {
  it('finishes an in-flight request on SIGTERM, refuses new ones, and exits 0', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const server = await start(url, {}, { capture: true });

    // Headers now, body later: the server has the request (it answered 100 Continue) and
    // must wait for the rest of it.
    const body = JSON.stringify({ name: 'Finished during shutdown' });
    const request = http.request(`${server.url}${API}/shop`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
    });
    const response = once(request, 'response') as Promise<[http.IncomingMessage]>;
    const continued = once(request, 'continue');
    request.flushHeaders();
    await continued;

    server.child.kill('SIGTERM');
    // Wait until the server has stopped taking new requests, so the request really is in flight
    // during shutdown.
    for (;;) {
      const status = await fetch(`${server.url}/healthz`).then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(server.child.exitCode).toBeNull();

    request.end(body);
    const [res] = await response;
    let text = '';
    for await (const chunk of res) text += chunk;
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(text).data.name).toBe('Finished during shutdown');
    // So a keep-alive client does not hold the process open until its idle timeout.
    expect(res.headers.connection).toBe('close');
    expect(await exited(server)).toEqual({ code: 0, signal: null });
  });
});

describe(`kill -9 (${TEST_DIALECT})`, () => {
  it('keeps every acknowledged write and leaves a database that opens and checks out', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const server = await start(url);

    const acknowledged: number[] = [];
    let killed = false;
    const writer = async (first: number) => {
      for (let id = first; !killed; id += 4) {
        const res = await fetch(`${server.url}${API}/customers/${id}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ first_name: `Customer ${id}` }),
        }).catch(() => null);
        if (res === null) return;
        if (res.status >= 200 && res.status < 300) acknowledged.push(id);
        else throw new Error(`PUT /customers/${id} answered ${res.status}: ${await res.text()}`);
      }
    };
    let writing = true;
    const writers = Promise.all([1, 2, 3, 4].map(writer)).finally(() => (writing = false));
    while (writing && acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(writing, 'the writers stopped before the kill').toBe(true);
    server.child.kill('SIGKILL');
    killed = true;
    expect((await exited(server)).signal).toBe('SIGKILL');
    await writers;

    const { dialect, location } = parseDatabaseUrl(url);
    if (dialect === 'sqlite') {
      const sqlite = new BetterSqlite3(location);
      try {
        expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        sqlite.close();
      }
    }

    const restarted = await start(url);
    for (const id of acknowledged) {
      const res = await fetch(`${restarted.url}${API}/customers/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status, `customer ${id} answered 2xx before the kill`).toBe(200);
      expect(((await res.json()) as { data: { first_name: string } }).data.first_name).toBe(`Customer ${id}`);
    }
    await restarted.stop();
    expect(restarted.child.exitCode).toBe(0);
  });
});
