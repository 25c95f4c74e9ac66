import { Migrator, type Kysely, type MigrationProvider, type MigrationResultSet } from 'kysely';
import { writerOf } from './dialect.js';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * On PostgreSQL Kysely runs the migrations of a call in one transaction. A migration that fills
 * from history (`transactional = false`, 015_reports) runs alone instead, on one connection,
 * and commits its own steps, so that its fill is bounded transactions rather than one.
 */
function migrator(db: Kysely<any>, disableTransactions = false): Migrator {
  // On a server's database whose reads have a connection of their own, migrations write.
  return new Migrator({
    db: writerOf(db),
    provider,
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
    disableTransactions,
  });
}

const ownTransactions = (name: string) => (migrations[name] as { transactional?: boolean } | undefined)?.transactional === false;

function applied({ error, results }: MigrationResultSet): string[] {
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Brings the schema up to date; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const done: string[] = [];
  for (;;) {
    const pending = await pendingMigrations(db);
    if (pending.length === 0) return done;
    // The pending migrations up to the next that commits its own steps together; that one alone.
    const next = pending.findIndex(ownTransactions);
    if (next === -1) return [...done, ...applied(await migrator(db).migrateToLatest())];
    const target = pending[Math.max(0, next - 1)]!;
    done.push(...applied(await migrator(db, next === 0).migrateTo(target)));
  }
}

/** The migrations that migrateToLatest would apply, in order; it writes nothing. */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  return (await migrator(db).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Every migration this version has, in order (the pending ones of a database not yet created). */
export const allMigrations = (): string[] => Object.keys(migrations);
