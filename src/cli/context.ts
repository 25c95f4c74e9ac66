import { loadConfig, type Config } from '../config.js';
import { connect, type Database } from '../db/connect.js';
import { migrateToLatest } from '../db/migrator.js';

/** Opens the database named by DATABASE_URL, brings it up to date, runs fn and closes it. */
export async function withDatabase<T>(fn: (database: Database, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = connect(config.databaseUrl);
  try {
    await migrateToLatest(database.db);
    return await fn(database, config);
  } finally {
    await database.close();
  }
}

/** Prints a value as JSON (for scripts) or as a small table (for people). */
export function output(json: boolean, value: unknown, table: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${table()}\n`);
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

export class CliError extends Error {}

export function parseId(value: string, what: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value)))
    throw new CliError(`${what} must be a positive integer, got "${value}"`);
  return Number(value);
}
