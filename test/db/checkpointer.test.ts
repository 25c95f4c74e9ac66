import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkpointInBackground, type CheckpointResult } from '../../src/db/checkpointer.js';
import { connect } from '../../src/db/connect.js';

// SQLite's WAL is checkpointed from a thread of the server's own, not inside the commits that
// answer requests (db/checkpointer.ts). Whatever the tests' database, this is SQLite's alone.

const PAGE = 4096;

describe('checkpoints in the background (SQLite)', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-checkpoint-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a commit returns before its pages reach the database file; the thread copies them there', async () => {
    const file = path.join(dir, 'db.sqlite');
    const checkpoints: CheckpointResult[] = [];
    // A look every 1.5 s: the commit below falls between two of them.
    const database = connect(`sqlite:${file}`, { readConnection: true, backgroundCheckpoints: { intervalMs: 1500, onCheckpoint: (r) => checkpoints.push(r) } });
    try {
      await sql`create table blobs (id integer primary key, data blob not null)`.execute(database.db);
      await expect.poll(() => checkpoints.some((c) => c.checkpointed > 0), { timeout: 15_000 }).toBe(true);
      const looked = checkpoints.length;
      const before = fs.statSync(file).size;
      // 1,500 pages and more: past SQLite's own 1,000, at which the writer would checkpoint in its commit.
      await sql`insert into blobs (data) select randomblob(${PAGE}) from (with recursive n(i) as (select 1 union all select i + 1 from n where i < 1500) select i from n)`.execute(
        database.db,
      );
      expect(fs.statSync(file).size).toBe(before);
      expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(1500 * PAGE);

      // (A look that falls inside the insert, once the writer began the WAL anew, finds a change and nothing to copy.)
      await expect.poll(() => checkpoints.slice(looked).find((c) => c.checkpointed > 0), { timeout: 15_000 }).toBeDefined();
      const copied = checkpoints.slice(looked).find((c) => c.checkpointed > 0)!;
      expect(copied.checkpointed).toBeGreaterThan(1500);
      expect(copied.checkpointed).toBe(copied.log);
      expect(fs.statSync(file).size).toBeGreaterThan(before + 1500 * PAGE);
      // The rows are all there, read back through the reading connection.
      const [{ n }] = (await sql<{ n: number }>`select count(*) as n from blobs`.execute(database.db)).rows as [{ n: number }];
      expect(n).toBe(1500);
    } finally {
      await database.close();
    }
    // The thread's connection was closed first: the writer's was the last, and took the WAL with it.
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('looks again only when the database changed', async () => {
    const file = path.join(dir, 'db.sqlite');
    const checkpoints: CheckpointResult[] = [];
    const database = connect(`sqlite:${file}`, { readConnection: true, backgroundCheckpoints: { intervalMs: 50, onCheckpoint: (r) => checkpoints.push(r) } });
    try {
      await sql`create table t (x integer)`.execute(database.db);
      // Its first look, and one after the table was made (the same one when the thread started after it).
      await expect.poll(() => checkpoints.some((c) => c.checkpointed > 0), { timeout: 15_000 }).toBe(true);
      const seen = checkpoints.length;
      // Many of its intervals pass with nothing written: no checkpoint.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(checkpoints).toHaveLength(seen);
      await sql`insert into t (x) values (1)`.execute(database.db);
      await expect.poll(() => checkpoints.slice(seen).some((c) => c.checkpointed > 0), { timeout: 15_000 }).toBe(true);
    } finally {
      await database.close();
    }
  });

  it('a thread that cannot start leaves the writer checkpointing in its commits, as SQLite does by itself', async () => {
    const writer = new BetterSqlite3(path.join(dir, 'db.sqlite'));
    try {
      writer.pragma('journal_mode = WAL');
      const errors: Error[] = [];
      const checkpointer = checkpointInBackground(writer, path.join(dir, 'missing', 'db.sqlite'), { onError: (e) => errors.push(e) });
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(10_000);
      await expect.poll(() => errors.length, { timeout: 15_000 }).toBe(1);
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
      await checkpointer.stop();
    } finally {
      writer.close();
    }
  });
});
