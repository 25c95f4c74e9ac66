import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { isPostgres } from '../../src/db/dialect.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { pruneAuditEvents } from '../../src/shops/audit.js';
import { createTestDatabase, migrateBefore, TEST_DIALECT, type TestDatabase } from '../helpers/database.js';

// DESIGN 18, distribution by shop: every table holding a shop's data has shop_id in its primary
// key and in every unique key, and every foreign key between such tables includes it; the
// reference tables, shared by every shop, are named here and nowhere else. The rule is read from
// PostgreSQL's catalogue, so a table added by a later migration is held to it without being named.

const REFERENCE_TABLES = ['shops', 'schema_migrations', 'schema_migrations_lock', 'id_sequences', 'api_tokens', 'storefront_keys'];

/** Every breach of the rule in the current schema, as `table: what`. */
async function breaches(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ breach: string }>`
    with tables as (
      select c.oid, c.relname, c.relname = any(${REFERENCE_TABLES}::text[]) as reference,
        (select attnum from pg_attribute a where a.attrelid = c.oid and a.attname = 'shop_id' and not a.attisdropped) as shop_col
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
    )
    select relname || ': no shop_id column' as breach from tables where not reference and shop_col is null
    union all
    select relname || ': no primary key' from tables t
      where not reference and not exists (select 1 from pg_index x where x.indrelid = t.oid and x.indisprimary)
    union all
    select t.relname || ': ' || (case when x.indisprimary then 'primary key ' else 'unique index ' end) || i.relname || ' without shop_id'
      from tables t join pg_index x on x.indrelid = t.oid and x.indisunique join pg_class i on i.oid = x.indexrelid
      where not t.reference and (t.shop_col is null or not (t.shop_col = any(x.indkey::int2[])))
    union all
    select t.relname || ': foreign key ' || k.conname || ' to ' || r.relname || (case when t.reference then ' (a reference table may only refer to reference tables)' else ' without shop_id on both sides' end)
      from tables t join pg_constraint k on k.conrelid = t.oid and k.contype = 'f' join tables r on r.oid = k.confrelid
      where not r.reference and (t.reference or t.shop_col is null or r.shop_col is null
        or not exists (select 1 from generate_subscripts(k.conkey, 1) p where k.conkey[p] = t.shop_col and k.confkey[p] = r.shop_col))
    order by 1`.execute(db);
  return rows.map((row) => row.breach);
}

describe(`distribution by shop (${TEST_DIALECT})`, () => {
  let testDb: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    testDb = await createTestDatabase();
    database = connect(testDb.url);
  });
  afterAll(async () => {
    await database.close();
    await testDb.drop();
  });

  const T0 = Date.UTC(2026, 0, 1);
  const indexes = async (db: Kysely<any>): Promise<string[]> => {
    const { rows } = isPostgres(db)
      ? await sql<{
          name: string;
        }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'audit_events' order by 1`.execute(db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'audit_events' and sql is not null order by 1`.execute(
          db,
        );
    return rows.map((row) => row.name);
  };

  it('migration 026 keeps a populated audit log, its indexes and its sequence', async () => {
    const db = database.db as unknown as Kysely<any>;
    // Up to the latest and down through 026 (015 fills in steps of its own, outside the transaction migrateBefore runs in).
    await migrateToLatest(db);
    await migrateBefore(db, '026_distribution_by_shop');
    for (const shop of [1, 2]) {
      await sql`insert into shops (id, name, created_at, updated_at) values (${shop}, ${`Shop ${shop}`}, ${T0}, ${T0})`.execute(db);
    }
    const entry = (shop: number, at: number, resourceId: string) =>
      sql`insert into audit_events (shop_id, occurred_at, actor_type, action, resource, resource_id, changes)
        values (${shop}, ${at}, 'cli', 'customer.updated', 'customer', ${resourceId}, '{}')`.execute(db);
    for (let i = 0; i < 30; i++) await entry((i % 2) + 1, T0 + i, String(i));
    const before = (await sql`select * from audit_events order by id`.execute(db)).rows;
    const indexesBefore = await indexes(db);

    await migrateToLatest(db);

    expect((await sql`select * from audit_events order by id`.execute(db)).rows).toEqual(before);
    const key = isPostgres(db)
      ? (await sql<{ def: string }>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'audit_events_pkey'`.execute(db)).rows[0]!.def
      : (await sql<{ name: string }>`select name from pragma_table_info('audit_events') where pk > 0 order by pk`.execute(db)).rows
          .map((r) => r.name)
          .join(', ');
    // SQLite keeps its rowid as the id (the migration says why); PostgreSQL keys by shop.
    expect(key).toBe(isPostgres(db) ? 'PRIMARY KEY (shop_id, id)' : 'id');
    // The (shop_id, id) index goes on PostgreSQL, where the key now is that index; the others stay.
    const expected = isPostgres(db) ? [...indexesBefore.filter((name) => name !== 'audit_events_shop'), 'audit_events_pkey'].sort() : indexesBefore;
    expect(await indexes(db)).toEqual([...new Set(expected)].sort());
    // New entries go on from the same sequence.
    await entry(2, T0 + 100, 'new');
    const last = (await sql<{ id: number }>`select id from audit_events where resource_id = 'new'`.execute(db)).rows[0]!;
    expect(Number(last.id)).toBe(Math.max(...before.map((row: any) => Number(row.id))) + 1);

    // Retention deletes the oldest entries of every shop by their whole key.
    expect(await pruneAuditEvents(database.db, T0 + 10, 5)).toBe(5);
    const left = (await sql<{ resource_id: string }>`select resource_id from audit_events order by occurred_at limit 1`.execute(db)).rows;
    expect(left[0]!.resource_id).toBe('5');
    expect(await pruneAuditEvents(database.db, T0 + 10, 100)).toBe(5);
    expect(Number((await sql<{ n: number }>`select count(*) as n from audit_events`.execute(db)).rows[0]!.n)).toBe(21);
  });

  it.skipIf(TEST_DIALECT !== 'postgres')("every shop table follows the rule in PostgreSQL's catalogue, and a breach is caught", async () => {
    const db = database.db as unknown as Kysely<any>;
    expect(await breaches(db)).toEqual([]);
    // A table added later that breaks the rule in each way is found without being named.
    await sql`create table later_probe (shop_id bigint not null, id bigint not null, code text, customer_remote_id bigint, primary key (id))`.execute(db);
    await sql`create unique index later_probe_code on later_probe (code)`.execute(db);
    await sql`alter table later_probe add constraint later_probe_customer foreign key (shop_id, customer_remote_id) references customers (remote_id, shop_id)`.execute(
      db,
    );
    await sql`create table later_loose (id bigint primary key, customer_remote_id bigint)`.execute(db);
    await sql`create unique index customers_remote on customers (remote_id)`.execute(db);
    await sql`alter table later_loose add constraint later_loose_customer foreign key (customer_remote_id) references customers (remote_id)`.execute(db);
    expect(await breaches(db)).toEqual([
      'customers: unique index customers_remote without shop_id',
      'later_loose: foreign key later_loose_customer to customers without shop_id on both sides',
      'later_loose: no shop_id column',
      'later_loose: primary key later_loose_pkey without shop_id',
      // shop_id matched to the other table's remote_id: a key that includes it, but not on both sides.
      'later_probe: foreign key later_probe_customer to customers without shop_id on both sides',
      'later_probe: primary key later_probe_pkey without shop_id',
      'later_probe: unique index later_probe_code without shop_id',
    ]);
    await sql`drop table later_loose`.execute(db);
    await sql`drop table later_probe`.execute(db);
    await sql`drop index customers_remote`.execute(db);
    expect(await breaches(db)).toEqual([]);
  });

  it.skipIf(TEST_DIALECT !== 'postgres')('finds audit entries by their key: the retention job reads no table scan', async () => {
    const db = database.db as unknown as Kysely<any>;
    // A handful of rows: the planner is told to use an index wherever one can serve.
    const rows = await db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const explained = await sql<{ 'QUERY PLAN': string }>`explain delete from audit_events where (shop_id, id) in
        (select shop_id, id from audit_events where occurred_at < 1 order by occurred_at limit 10)`.execute(trx);
      return explained.rows;
    });
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index Scan using audit_events_occurred_at/);
    expect(plan).not.toMatch(/Seq Scan on audit_events/);
  });
});
