import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

function migrator(db: Kysely<any>): Migrator {
  return new Migrator({ db, provider, migrationTableName: 'schema_migrations', migrationLockTableName: 'schema_migrations_lock' });
}

/** Brings the schema up to date; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { error, results } = await migrator(db).migrateToLatest();
  if (error) throw error;
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations that migrateToLatest would apply, in order; it writes nothing. */
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  return (await migrator(db).getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Every migration this version has, in order (the pending ones of a database not yet created). */
export const allMigrations = (): string[] => Object.keys(migrations);
