import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { migrations } from './migrations/index.js';

// Copies of an SQLite database through SQLite's online backup API, for `loyalty backup` and
// `loyalty restore`. The copy is written beside its destination under a scratch name and renamed
// into place once whole, so a failed or interrupted run never leaves a partial file at the path.

/** Pages copied by the first step: 16 MB at the 4 KB page size, a few milliseconds of reading. */
const FIRST_STEP_PAGES = 4096;

export interface CopyProgress {
  totalPages: number;
  remainingPages: number;
}

export class BackupRefused extends Error {}

function refuseExisting(target: string, what: string): void {
  // A database is the file and, in WAL mode, its -wal: either one holding data is one to keep.
  for (const file of [target, `${target}-wal`]) {
    if (fs.existsSync(file) && fs.statSync(file).size > 0) throw new BackupRefused(`${file} exists and is not empty: ${what} never overwrites a database`);
  }
}

/**
 * Copies `from` (an open database) into the file `target`, by steps. A step that reads the source
 * while another process commits to it is restarted by SQLite from the first page; each restart
 * makes the next steps four times longer, so a copy under steady writes still finishes. In WAL
 * mode the steps only read: writers go on meanwhile.
 */
async function copyInto(
  from: BetterSqlite3.Database,
  target: string,
  journalMode: 'delete' | 'wal',
  onProgress?: (progress: CopyProgress) => void,
): Promise<CopyProgress> {
  const scratch = path.join(path.dirname(target), `.${path.basename(target)}.partial-${process.pid}`);
  fs.rmSync(scratch, { force: true });
  let step = FIRST_STEP_PAGES;
  let remaining = Number.POSITIVE_INFINITY;
  try {
    const done = await from.backup(scratch, {
      progress: (progress) => {
        if (progress.remainingPages > remaining) step = Math.min(step * 4, progress.totalPages);
        remaining = progress.remainingPages;
        onProgress?.(progress);
        return step;
      },
    });
    // A backup is one self-contained file (reading it leaves no -wal or -shm beside it); a
    // restored database is in WAL mode, as the server keeps it.
    const copy = new BetterSqlite3(scratch);
    copy.pragma(`journal_mode = ${journalMode}`);
    copy.close();
    fs.renameSync(scratch, target);
    return done;
  } catch (error) {
    fs.rmSync(scratch, { force: true });
    throw error;
  }
}

/** A consistent copy of the SQLite database at `source`, taken while it serves, into the new file `target`. */
export async function backupSqlite(source: string, target: string, onProgress?: (progress: CopyProgress) => void): Promise<CopyProgress> {
  if (!fs.existsSync(source)) throw new BackupRefused(`there is no database at ${source}`);
  refuseExisting(target, 'loyalty backup');
  if (!fs.existsSync(path.dirname(path.resolve(target)))) throw new BackupRefused(`the directory of ${target} does not exist`);
  const database = new BetterSqlite3(source, { fileMustExist: true });
  try {
    database.pragma('busy_timeout = 10000');
    return await copyInto(database, target, 'delete', onProgress);
  } finally {
    database.close();
  }
}

/** The migrations a database file has applied, or null when it is not a Loyalty API database. */
function appliedMigrations(database: BetterSqlite3.Database, file: string): string[] | null {
  try {
    return (database.prepare('select name from schema_migrations order by name').all() as { name: string }[]).map((row) => row.name);
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_NOTADB') throw new BackupRefused(`${file} is not an SQLite database`);
    return null;
  }
}

/**
 * Copies the backup `source` into `target`, which must not exist or be empty. Refuses a file that
 * is no Loyalty API database, and one made by a newer version (migrations this one does not have).
 * Returns the migrations the restored database has yet to apply.
 */
export async function restoreSqlite(source: string, target: string): Promise<{ pending: string[] }> {
  if (!fs.existsSync(source)) throw new BackupRefused(`there is no backup at ${source}`);
  refuseExisting(target, 'loyalty restore');
  let database: BetterSqlite3.Database;
  try {
    database = new BetterSqlite3(source, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupRefused(`${source} cannot be opened as an SQLite database: ${(error as Error).message}`);
  }
  try {
    const applied = appliedMigrations(database, source);
    if (applied === null) throw new BackupRefused(`${source} is not a Loyalty API database (it has no schema_migrations table)`);
    const unknown = applied.filter((name) => !(name in migrations));
    if (unknown.length > 0)
      throw new BackupRefused(`${source} was made by a newer version of Loyalty API (migrations ${unknown.join(', ')} are unknown to this one)`);
    fs.mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
    await copyInto(database, target, 'wal');
    return { pending: Object.keys(migrations).filter((name) => !applied.includes(name)) };
  } finally {
    database.close();
  }
}
