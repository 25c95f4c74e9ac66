import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN, type ServerProcess } from '../../bench/lib/server.js';
import { parseDatabaseUrl } from '../../src/db/connect.js';
import { allMigrations } from '../../src/db/migrator.js';
import { API } from '../helpers/app.js';
import type { CliResult } from '../helpers/cli.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, seedShop, start } from '../helpers/server.js';

// `loyalty backup`, `loyalty restore` and `loyalty migrate --dry-run`, as an operator runs them:
// the compiled CLI in a child process, beside a real server when it must serve meanwhile.

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-backup-'));
  dirs.push(dir);
  return dir;
}

function loyalty(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

const customersIn = (file: string): number => {
  const sqlite = new BetterSqlite3(file, { readonly: true });
  try {
    return (sqlite.prepare('select count(*) as n from customers').get() as { n: number }).n;
  } finally {
    sqlite.close();
  }
};

describe(`loyalty migrate --dry-run (${TEST_DIALECT})`, () => {
  it('lists every migration on a new database, applies none, then lists none once migrated', async () => {
    const url = await freshDatabase();
    const before = await loyalty(url, 'migrate', '--dry-run', '--json');
    expect(before.code).toBe(0);
    expect(JSON.parse(before.stdout)).toEqual({ pending: allMigrations() });
    // Still all pending: the dry run wrote nothing (on SQLite, not even the file).
    expect(JSON.parse((await loyalty(url, 'migrate', '--dry-run', '--json')).stdout)).toEqual({ pending: allMigrations() });
    if (TEST_DIALECT === 'sqlite') expect(fs.existsSync(parseDatabaseUrl(url).location)).toBe(false);
    expect((await loyalty(url, 'migrate', '--dry-run')).stdout).toContain(`${allMigrations().length} pending migration(s)`);

    expect(JSON.parse((await loyalty(url, 'migrate', '--json')).stdout)).toEqual({ applied: allMigrations() });
    expect(JSON.parse((await loyalty(url, 'migrate', '--dry-run', '--json')).stdout)).toEqual({ pending: [] });
    expect((await loyalty(url, 'migrate', '--dry-run')).stdout).toBe('Database is up to date: no pending migrations.\n');
  });
});

// Backup and restore are of SQLite: their tests run on SQLite whichever database the suite is on.
async function sqliteWithShop(): Promise<{ server: ServerProcess; token: string; url: string }> {
  const url = `sqlite:${path.join(scratch(), 'loyalty.db')}`;
  const token = await seedShop(url);
  return { server: await start(url, {}, { capture: true }), token, url };
}

describe('loyalty backup and restore on PostgreSQL', () => {
  it('exit 2 and name pg_dump and pg_restore, before connecting', async () => {
    const url = 'postgres://nobody@127.0.0.1:9/nothing';
    const backup = await loyalty(url, 'backup', path.join(scratch(), 'copy.db'));
    expect(backup.code).toBe(2);
    expect(backup.stderr).toMatch(/^error: .*pg_dump/);
    const restore = await loyalty(url, 'restore', path.join(scratch(), 'copy.db'));
    expect(restore.code).toBe(2);
    expect(restore.stderr).toMatch(/^error: .*pg_restore/);
  });
});

describe('loyalty backup and restore on SQLite', () => {
  it('copies the database consistently while the server takes writes, and the copy restores and verifies', async () => {
    const { server, token, url } = await sqliteWithShop();
    const put = (id: number) =>
      fetch(`${server.url}${API}/customers/${id}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `c${id}@example.com` }),
      });
    for (let id = 1; id <= 200; id++) expect((await put(id)).status).toBeLessThan(300);

    // Writers keep going during the whole backup.
    let writing = true;
    let next = 201;
    const writer = (async () => {
      while (writing) expect((await put(next++)).status).toBeLessThan(300);
    })();
    const file = path.join(scratch(), 'copy.db');
    const backup = await loyalty(url, 'backup', file, '--json');
    writing = false;
    await writer;
    expect(backup.code, backup.stderr).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({ file, bytes: fs.statSync(file).size });
    // One self-contained file, nothing else left: reading it creates nothing beside it.
    expect(fs.readdirSync(path.dirname(file))).toEqual(['copy.db']);
    const copied = customersIn(file);
    expect(copied).toBeGreaterThanOrEqual(200);
    expect(copied).toBeLessThan(next);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['copy.db']);

    // Restored into a new path, the copy is whole: every ledger invariant holds, and it serves.
    const restored = `sqlite:${path.join(scratch(), 'restored', 'loyalty.db')}`;
    const restore = await loyalty(restored, 'restore', file, '--json');
    expect(restore.code, restore.stderr).toBe(0);
    expect(JSON.parse(restore.stdout)).toMatchObject({ file, pending_migrations: [] });
    expect(customersIn(parseDatabaseUrl(restored).location)).toBe(copied);
    expect((await loyalty(restored, 'verify')).code).toBe(0);
    await server.stop();
  });

  it('never overwrites: a backup onto an existing file, a restore onto a database that has data', async () => {
    const { url } = await sqliteWithShop();
    const dir = scratch();
    const existing = path.join(dir, 'existing.db');
    fs.writeFileSync(existing, 'keep me');
    const backup = await loyalty(url, 'backup', existing);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toContain('never overwrites');
    expect(fs.readFileSync(existing, 'utf8')).toBe('keep me');

    const copy = path.join(dir, 'copy.db');
    expect((await loyalty(url, 'backup', copy)).code).toBe(0);
    const restore = await loyalty(url, 'restore', copy);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toMatch(/^error: .* exists and is not empty: loyalty restore never overwrites a database\n$/);

    // An empty file at the path is an empty database: the restore fills it.
    const empty = path.join(dir, 'empty.db');
    fs.writeFileSync(empty, '');
    expect((await loyalty(`sqlite:${empty}`, 'restore', copy)).code).toBe(0);
    expect((await loyalty(`sqlite:${empty}`, 'migrate', '--dry-run')).stdout).toContain('no pending migrations');
  });

  it('refuses a file that is no Loyalty API database, and a backup of a newer version', async () => {
    const dir = scratch();
    const target = `sqlite:${path.join(dir, 'target.db')}`;
    const text = path.join(dir, 'notes.txt');
    fs.writeFileSync(text, 'not a database');
    const notSqlite = await loyalty(target, 'restore', text);
    expect(notSqlite.code).toBe(2);
    expect(notSqlite.stderr).toContain('notes.txt is not an SQLite database');

    const other = path.join(dir, 'other.db');
    const sqlite = new BetterSqlite3(other);
    sqlite.exec('create table things (id integer primary key)');
    sqlite.close();
    expect((await loyalty(target, 'restore', other)).stderr).toContain('is not a Loyalty API database');

    const newer = path.join(dir, 'newer.db');
    const made = new BetterSqlite3(newer);
    made.exec(`create table schema_migrations (name varchar(255) primary key, timestamp varchar(255))`);
    made.prepare('insert into schema_migrations values (?, ?)').run('999_from_the_future', new Date().toISOString());
    made.close();
    const refused = await loyalty(target, 'restore', newer);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('made by a newer version of Loyalty API (migrations 999_from_the_future');
    expect(fs.readdirSync(dir).sort()).toEqual(['newer.db', 'notes.txt', 'other.db']);
  });
});
