import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { getShop } from '../../src/shops/repository.js';
import { setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// On PostgreSQL a prepared query (db/prepared.ts) runs as a named statement, parsed once per
// connection and planned once where a generic plan is no worse; any other SQL runs unnamed.

describe.runIf(TEST_DIALECT === 'postgres')('named statements (postgres)', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(async () => t?.close());

  const statements = async (db: Database['db']) =>
    (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db)).rows.map((r) => r.statement);

  it("keeps a prepared query's SQL on the connection that ran it, and no other SQL", async () => {
    await t.database.db.connection().execute(async (db) => {
      expect((await getShop(db, t.shop.id))?.id).toBe(t.shop.id);
      await sql`select ${1}::int as one`.execute(db);
      const kept = await statements(db);
      expect(kept.filter((s) => /from "shops" where "id" = \$1/.test(s))).toHaveLength(1);
      expect(kept.filter((s) => s.includes('as one'))).toEqual([]);
    });
  });

  it('closes a connection whose statement no longer fits its table (a column added by another process), so one query fails, not every one after', async () => {
    // One connection for reads: the one that holds the statement is the one asked again.
    const database = connect(t.url, { poolSize: 2 });
    try {
      expect((await getShop(database.db, t.shop.id))?.id).toBe(t.shop.id);
      await sql`alter table shops add column added_elsewhere text`.execute(t.database.db);
      await expect(getShop(database.db, t.shop.id)).rejects.toMatchObject({ code: '0A000' });
      expect((await getShop(database.db, t.shop.id))?.id).toBe(t.shop.id);
      expect((await getShop(database.db, t.shop.id))?.id).toBe(t.shop.id);
    } finally {
      await database.close();
    }
  });
});

// On SQLite a statement whose LIMIT is a bare parameter is prepared anew at every run (the
// planner reads the value bound to it, db/sqlite-driver.ts): Kysely's queries write it `+?`.
describe.runIf(TEST_DIALECT === 'sqlite')('LIMIT on SQLite', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(async () => t?.close());

  it('is written so that binding it does not prepare the statement again, and limits as before', async () => {
    const query = t.database.db.selectFrom('shops').select('id').orderBy('id').limit(1).offset(0);
    expect(query.compile().sql).toMatch(/ limit \+\? offset \?$/);
    expect(await query.execute()).toEqual([{ id: t.shop.id }]);
    expect(await t.database.db.selectFrom('shops').select('id').limit(0).execute()).toEqual([]);
  });
});
