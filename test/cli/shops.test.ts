import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN } from '../../bench/lib/server.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { connect, type Database } from '../../src/db/connect.js';
import { API } from '../helpers/app.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';
import { TOKEN_CACHE_MS } from '../../src/http/auth.js';

// The `loyalty` command as a user runs it: the compiled CLI in a child process, on the test
// database. `npm test` builds it first.

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(databaseUrl: string, ...args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function ok(databaseUrl: string, ...args: string[]): Promise<string> {
  const result = await cli(databaseUrl, ...args);
  if (result.code !== 0) throw new Error(`loyalty ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return result.stdout;
}

describe(`loyalty shops and tokens (${TEST_DIALECT})`, () => {
  let testDb: TestDatabase;
  let url: string;
  let database: Database;
  let app: FastifyInstance;

  beforeAll(async () => {
    if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build (npm test does it)`);
    testDb = await createTestDatabase();
    url = testDb.url;
    // The CLI migrates on first use; the app opens the same database afterwards.
    await ok(url, 'migrate');
    database = connect(url);
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }, { databaseUrl: url, bootstrap: false }), { database });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    await testDb?.drop();
  });

  const get = (token: string, authorization = `Bearer ${token}`) =>
    app.inject({ method: 'GET', url: `${API}/shop`, headers: { authorization } });

  it('creates a shop and prints exactly {"shop": …, "token": …} with --json; the token works', async () => {
    const created = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Acme Coffee', '--per-event-expiry', '--expiry-days', '30', '--json'));
    expect(Object.keys(created).sort()).toEqual(['shop', 'token']);
    expect(created.shop).toEqual({
      id: expect.any(Number),
      name: 'Acme Coffee',
      per_event_expiry: true,
      points_expiry_days: 30,
      points_pending_days: 0,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    expect(created.token).toMatch(/^lty_[\w-]{43}$/);
    const res = await get(created.token);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ id: created.shop.id, name: 'Acme Coffee', per_event_expiry: true, points_expiry_days: 30 });
    // The bare token works too.
    expect((await get(created.token, created.token)).statusCode).toBe(200);
  });

  it('prints the token for people without --json', async () => {
    const out = await ok(url, 'shops', 'create', '--name', 'Plain');
    expect(out).toMatch(/Created shop \d+ \(Plain\)/);
    const token = /(lty_[\w-]{43})/.exec(out)?.[1];
    expect(token).toBeDefined();
    expect((await get(token!)).statusCode).toBe(200);
  });

  it('lists shops as a table and as JSON', async () => {
    await ok(url, 'shops', 'create', '--name', 'Listed shop');
    const rows = JSON.parse(await ok(url, 'shops', 'list', '--json')).shops;
    expect(rows.map((s: { name: string }) => s.name)).toContain('Listed shop');
    const table = await ok(url, 'shops', 'list');
    expect(table.split('\n')[0]).toMatch(/^id\s+name\s+per_event_expiry\s+points_expiry_days\s+created_at/);
    expect(table).toContain('Listed shop');
  });

  it('updates a shop, and the API shows the change', async () => {
    const { shop, token } = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Before', '--expiry-days', '10', '--json'));
    const updated = JSON.parse(await ok(url, 'shops', 'update', String(shop.id), '--name', 'After', '--expiry-days', 'never', '--per-event-expiry', '--json'));
    expect(updated.shop).toMatchObject({ id: shop.id, name: 'After', points_expiry_days: null, per_event_expiry: true });
    expect((await get(token)).json().data).toMatchObject({ name: 'After', points_expiry_days: null, per_event_expiry: true });
    await ok(url, 'shops', 'update', String(shop.id), '--no-per-event-expiry');
    expect((await get(token)).json().data.per_event_expiry).toBe(false);
  });

  it('creates, lists and revokes tokens; a revoked token answers 401, the others keep working', async () => {
    const { shop, token: first } = JSON.parse(await ok(url, 'shops', 'create', '--name', 'Tokens', '--json'));
    const second = JSON.parse(await ok(url, 'tokens', 'create', '--shop', String(shop.id), '--name', 'ci', '--json'));
    expect(second).toEqual({ id: expect.any(Number), shop_id: shop.id, name: 'ci', hint: `lty_…${second.token.slice(-4)}`, token: expect.stringMatching(/^lty_/) });
    expect((await get(second.token)).statusCode).toBe(200);

    const listed = JSON.parse(await ok(url, 'tokens', 'list', '--shop', String(shop.id), '--json')).tokens;
    expect(listed.map((t: { name: string }) => t.name)).toEqual(['default', 'ci']);
    expect(JSON.stringify(listed)).not.toContain(second.token);
    expect(listed.every((t: { revoked_at: string | null }) => t.revoked_at === null)).toBe(true);

    expect(await ok(url, 'tokens', 'revoke', String(second.id), '--shop', String(shop.id))).toMatch(/Revoked token/);
    // The API process trusts a token it accepted for TOKEN_CACHE_MS; a revocation made by
    // another process (this CLI) must take effect within that window.
    const deadline = Date.now() + TOKEN_CACHE_MS + 1000;
    let res = await get(second.token);
    while (res.statusCode === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      res = await get(second.token);
    }
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('unauthorized');
    expect((await get(first)).statusCode).toBe(200);

    const after = JSON.parse(await ok(url, 'tokens', 'list', '--shop', String(shop.id), '--json')).tokens;
    expect(after.find((t: { id: number }) => t.id === second.id).revoked_at).toMatch(/Z$/);
    expect(await ok(url, 'tokens', 'list', '--shop', String(shop.id))).toMatch(/^id\s+name\s+hint/);
  });

  it('refuses bad input with a clear message and a non-zero exit', async () => {
    const cases: [string[], RegExp][] = [
      [['shops', 'create'], /required option '--name <name>'/],
      [['shops', 'create', '--name', '  '], /--name must be 1 to 255 characters/],
      [['shops', 'create', '--name', 'X', '--expiry-days', 'soon'], /--expiry-days must be a positive integer, got "soon"/],
      [['shops', 'create', '--name', 'X', '--expiry-days', '0'], /--expiry-days must be a positive integer/],
      [['shops', 'update', 'abc', '--name', 'X'], /shop id must be a positive integer, got "abc"/],
      [['shops', 'update', '999999', '--name', 'X'], /No shop with id 999999/],
      [['shops', 'update', '1'], /Nothing to change/],
      [['tokens', 'create', '--shop', '999999'], /No shop with id 999999/],
      [['tokens', 'revoke', '999999', '--shop', '1'], /Shop 1 has no token 999999/],
      [['tokens', 'list'], /required option '--shop <id>'/],
      [['shops', 'frobnicate'], /unknown command 'frobnicate'/],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(url, ...args)));
    for (const [i, [args, message]] of cases.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });

  it('says what is wrong with a bad DATABASE_URL', async () => {
    const result = await cli('mysql://localhost/x', 'shops', 'list');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/^error: DATABASE_URL must start with sqlite: or postgres:\/\//);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
