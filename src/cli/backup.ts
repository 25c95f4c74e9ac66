import fs from 'node:fs';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { backupSqlite, BackupRefused, restoreSqlite, type CopyProgress } from '../db/backup.js';
import { parseDatabaseUrl } from '../db/connect.js';
import { CliError, output } from './context.js';

// `loyalty backup` and `loyalty restore`: SQLite only. PostgreSQL has its own tools, which know
// its server far better than an application could.

/** The SQLite file of DATABASE_URL; on PostgreSQL, exit 2 naming the tool to use instead. */
function sqliteFile(command: string, tool: string): string {
  const { dialect, location } = parseDatabaseUrl(loadConfig().databaseUrl);
  if (dialect === 'postgres') throw new CliError(`loyalty ${command} copies SQLite databases; on PostgreSQL use ${tool} (see docs/operations.md)`);
  return location;
}

async function refusalsExit2<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw error instanceof BackupRefused ? new CliError(error.message) : error;
  }
}

/** A percentage on stderr, when it is a terminal. */
function progressLine(): ((progress: CopyProgress) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  return ({ totalPages, remainingPages }) => process.stderr.write(`\rcopied ${Math.floor((100 * (totalPages - remainingPages)) / Math.max(1, totalPages))}%`);
}

export function registerBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('Copy the SQLite database to a new file, consistently, while it serves (SQLite online backup)')
    .argument('<file>', 'the copy to write; an existing file is never overwritten')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const source = sqliteFile('backup', 'pg_dump');
      const started = performance.now();
      const progress = progressLine();
      await refusalsExit2(() => backupSqlite(source, file, progress));
      if (progress) process.stderr.write('\n');
      const result = { file, bytes: fs.statSync(file).size, seconds: Math.round(performance.now() - started) / 1000 };
      output(options.json === true, result, () => `Backed up ${source} to ${file} (${(result.bytes / 1048576).toFixed(1)} MB in ${result.seconds} s).`);
    });

  program
    .command('restore')
    .description('Copy a backup into the SQLite path of DATABASE_URL, which must not exist or be empty')
    .argument('<file>', 'a file written by loyalty backup')
    .option('--json', 'print the result as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const target = sqliteFile('restore', 'pg_restore');
      const { pending } = await refusalsExit2(() => restoreSqlite(file, target));
      const next =
        pending.length === 0 ? 'Its schema is up to date.' : `It has ${pending.length} pending migration(s), which loyalty serve or loyalty migrate applies.`;
      output(options.json === true, { file, database: target, pending_migrations: pending }, () => `Restored ${file} into ${target}. ${next}`);
    });
}
