import { sql, type Kysely } from 'kysely';
import { isPostgres, shopTable, tableExists } from './_schema.js';

// Reports (docs/reports.md): the shop's time zone, and the ledger's aggregates kept by every
// writer of points events: per shop and UTC quarter hour (which no time zone's day boundary
// splits), per shop and local day in the shop's time zone, and per shop in all. Filled here from
// the history already written, so an upgraded shop's reports are right from the first request:
// the schema in one transaction, then the fill in bounded statements, each its own transaction
// (the migrator runs this migration outside one transaction of its own: `transactional`).

/** Each kind of ledger event, signed as the report shows it, for points and for credits. */
const KINDS = ['earned', 'redeemed', 'deducted', 'expired', 'reversed', 'clawed_back'] as const;
const COLUMNS = [...KINDS.map((k) => `points_${k}`), 'points_pending', ...KINDS.map((k) => `credits_${k}`)];
const QUARTER_MS = 900_000;
const DAY_MS = 86_400_000;
/** Events summed per statement while filling the quarters. */
const EVENTS_PER_STATEMENT = 50_000;

/** The migrator runs this migration on a connection, not in one transaction (db/migrator.ts). */
export const transactional = false;

export async function up(db: Kysely<any>): Promise<void> {
  // A fill interrupted before the migration was recorded is started again from empty aggregates.
  if (await tableExists(db, 'ledger_totals')) {
    for (const table of ['ledger_quarters', 'ledger_days', 'ledger_totals']) await db.deleteFrom(table).execute();
  } else {
    await db.transaction().execute(schema);
  }
  await fillQuarters(db);
  // Every shop's time zone is UTC here: a local day is 96 quarters.
  const sums = sql.join(COLUMNS.map((c) => sql`sum(${sql.ref(c)})`));
  await sql`insert into ledger_days (shop_id, day, ${sql.join(COLUMNS.map((c) => sql.ref(c)))})
    select shop_id, quarter / 96, ${sums} from ledger_quarters group by shop_id, quarter / 96`.execute(db);
  await sql`insert into ledger_totals (shop_id, points_outstanding, credits_outstanding, points_pending, customers_with_points)
    select shop_id, sum(points_balance), sum(credits_balance), sum(points_pending), sum(case when points_balance > 0 then 1 else 0 end)
    from customers group by shop_id`.execute(db);
}

async function schema(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('shops')
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .execute();
  for (const [table, key] of [
    ['ledger_quarters', 'quarter'],
    ['ledger_days', 'day'],
  ] as const) {
    await shopTable(db, table, [key], (t) => {
      let out = t.addColumn(key, 'bigint', (c) => c.notNull());
      for (const column of COLUMNS) out = out.addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0));
      return out;
    }).execute();
  }
  await shopTable(db, 'ledger_totals', [], (t) =>
    t
      .addColumn('points_outstanding', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('credits_outstanding', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('points_pending', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('customers_with_points', 'bigint', (c) => c.notNull().defaultTo(0)),
  ).execute();
  // Customers sorted by their balances, as the other sortable columns are (003_records).
  for (const column of ['points_balance', 'points_earned_lifetime', 'credits_balance']) {
    await db.schema.createIndex(`customers_${column}`).on('customers').columns(['shop_id', column, 'remote_id']).execute();
  }
  await programmeCounters(db);
}

/**
 * The programme report's counters, kept by triggers where they change: a tier's members (only
 * an update that sets vip_tier_id or remote_id fires, not the ledger's updates of balances), and the
 * redemptions of each reward per UTC day.
 */
async function programmeCounters(db: Kysely<any>): Promise<void> {
  await shopTable(db, 'tier_members', ['vip_tier_id'], (t) =>
    t.addColumn('vip_tier_id', 'bigint', (c) => c.notNull()).addColumn('n', 'bigint', (c) => c.notNull()),
  ).execute();
  await shopTable(db, 'reward_redemption_days', ['reward_id', 'day'], (t) =>
    t
      .addColumn('reward_id', 'bigint', (c) => c.notNull())
      .addColumn('day', 'bigint', (c) => c.notNull())
      .addColumn('n', 'bigint', (c) => c.notNull()),
  ).execute();
  // An erased customer (moved to a negative remote_id, customers/redact.ts) is no member.
  const member = (row: 'old' | 'new', delta: number) =>
    `insert into tier_members (shop_id, vip_tier_id, n) select ${row}.shop_id, ${row}.vip_tier_id, ${delta} where ${row}.vip_tier_id is not null and ${row}.remote_id > 0
      on conflict (shop_id, vip_tier_id) do update set n = tier_members.n + excluded.n;`;
  const redeemed = `insert into reward_redemption_days (shop_id, reward_id, day, n) values (new.shop_id, new.reward_id, new.created_at / ${DAY_MS}, 1)
      on conflict (shop_id, reward_id, day) do update set n = reward_redemption_days.n + 1;`;
  const triggers: [name: string, when: string, body: string][] = [
    ['customers_tier_insert', 'after insert on customers', member('new', 1)],
    ['customers_tier_update', 'after update of vip_tier_id, remote_id on customers', member('old', -1) + member('new', 1)],
    ['customers_tier_delete', 'after delete on customers', member('old', -1)],
    ['redemptions_day_insert', 'after insert on redemptions', redeemed],
  ];
  for (const [name, when, body] of triggers) {
    const changed = when.includes('update') ? ' when (old.vip_tier_id is distinct from new.vip_tier_id or (old.remote_id > 0) <> (new.remote_id > 0))' : '';
    if (isPostgres(db)) {
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${body} return null; end $$`).execute(db);
      await sql.raw(`create trigger ${name} ${when} for each row${changed} execute function ${name}()`).execute(db);
    } else {
      await sql.raw(`create trigger ${name} ${when} for each row${changed.replace('is distinct from', 'is not')} begin ${body} end`).execute(db);
    }
  }
  await sql`insert into tier_members (shop_id, vip_tier_id, n) select shop_id, vip_tier_id, count(*) from customers where vip_tier_id is not null and remote_id > 0 group by shop_id, vip_tier_id`.execute(
    db,
  );
  await sql`insert into reward_redemption_days (shop_id, reward_id, day, n)
    select shop_id, reward_id, created_at / ${sql.lit(DAY_MS)}, count(*) from redemptions group by shop_id, reward_id, created_at / ${sql.lit(DAY_MS)}`.execute(
    db,
  );
}

/**
 * Sums the events into quarters, a range of event ids at a time. What is pending now has no
 * history in events: it is counted in the quarter of the upgrade.
 */
async function fillQuarters(db: Kysely<any>): Promise<void> {
  const { rows: shops } = await sql<{ shop_id: number; last: number }>`select shop_id, max(id) as last from points_events group by shop_id`.execute(db);
  const special = sql`(source in ('reward_redemption', 'expiration', 'reversal') or (source = 'refund' and order_remote_id is not null))`;
  const kindSums = (amount: string) => {
    const a = sql.ref(amount);
    return [
      sql`sum(case when not ${special} and ${a} > 0 then ${a} else 0 end)`,
      sql`sum(case when source = 'reward_redemption' then -${a} else 0 end)`,
      sql`sum(case when not ${special} and ${a} < 0 then -${a} else 0 end)`,
      sql`sum(case when source = 'expiration' then -${a} else 0 end)`,
      sql`sum(case when source = 'reversal' then -${a} else 0 end)`,
      sql`sum(case when source = 'refund' and order_remote_id is not null then -${a} else 0 end)`,
    ];
  };
  const adds = sql.raw(COLUMNS.map((c) => `"${c}" = ledger_quarters."${c}" + excluded."${c}"`).join(', '));
  const columns = sql.join(COLUMNS.map((c) => sql.ref(c)));
  for (const { shop_id: shopId, last } of shops) {
    for (let after = 0; after < Number(last); after += EVENTS_PER_STATEMENT) {
      await sql`insert into ledger_quarters (shop_id, quarter, ${columns})
        select shop_id, applied_at / ${sql.lit(QUARTER_MS)}, ${sql.join([...kindSums('points_amount'), sql`0`, ...kindSums('credits_amount')])}
        from points_events where shop_id = ${shopId} and id > ${after} and id <= ${after + EVENTS_PER_STATEMENT}
        group by shop_id, applied_at / ${sql.lit(QUARTER_MS)}
        on conflict (shop_id, quarter) do update set ${adds}`.execute(db);
    }
  }
  const now = Math.floor(Date.now() / QUARTER_MS);
  await sql`insert into ledger_quarters (shop_id, quarter, points_pending)
    select shop_id, ${now}, sum(points_pending) from customers where true group by shop_id having sum(points_pending) <> 0
    on conflict (shop_id, quarter) do update set points_pending = ledger_quarters.points_pending + excluded.points_pending`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [name, table] of [
    ['customers_tier_insert', 'customers'],
    ['customers_tier_update', 'customers'],
    ['customers_tier_delete', 'customers'],
    ['redemptions_day_insert', 'redemptions'],
  ]) {
    await sql.raw(`drop trigger ${name}${isPostgres(db) ? ` on ${table}` : ''}`).execute(db);
    if (isPostgres(db)) await sql.raw(`drop function ${name}()`).execute(db);
  }
  for (const table of ['tier_members', 'reward_redemption_days']) await db.schema.dropTable(table).execute();
  for (const column of ['points_balance', 'points_earned_lifetime', 'credits_balance']) await db.schema.dropIndex(`customers_${column}`).execute();
  for (const table of ['ledger_totals', 'ledger_days', 'ledger_quarters']) await db.schema.dropTable(table).execute();
  await db.schema.alterTable('shops').dropColumn('timezone').execute();
}
