import { sql, type Kysely } from 'kysely';

// Balances stored per customer, changed in the transaction of every points event, so that no
// read or write sums a customer's history (docs/ledger.md, "Cost").
//
// points_balance and credits_balance hold what remains in every lot not yet written off
// (the sum of the customer's events): lots that expired since the last sweep are still in
// them, and a read subtracts those through the FIFO index below. next_expiry_* describe the
// earliest-expiring lots that still hold something (expired or not), so a read knows at once
// whether anything expired since: only when next_expiry_at <= now does it look at lots.

/** Never-expiring lots sort last in FIFO order: their key is the largest exact integer. */
const NEVER = '9007199254740991';

export async function up(db: Kysely<any>): Promise<void> {
  const columns: [string, boolean][] = [
    ['points_balance', true],
    ['credits_balance', true],
    ['points_pending', true],
    ['points_earned_lifetime', true],
    ['points_spent_lifetime', true],
    ['next_expiry_at', false],
    ['next_expiry_points', true],
    ['next_expiry_credits', true],
  ];
  for (const [name, zero] of columns) {
    await db.schema
      .alterTable('customers')
      .addColumn(name, 'bigint', (c) => (zero ? c.notNull().defaultTo(0) : c))
      .execute();
  }

  // A deduction reads the lots it consumes in FIFO order straight off this index: unexpired
  // first-expiring first, never-expiring last, oldest first among equals. It also finds the
  // lots that expired since the last sweep (key <= now) and the next expiry (key > now).
  await sql`drop index points_lots_open`.execute(db);
  await sql`create index points_lots_fifo on points_lots (shop_id, customer_remote_id, kind, (coalesce(expires_at, ${sql.raw(NEVER)})), id, remaining) where remaining > 0`.execute(
    db,
  );

  // Existing ledgers: every balance computed once from the lots and events.
  const lots = (kind: string, extra = sql``) =>
    sql`from points_lots l where l.shop_id = customers.shop_id and l.customer_remote_id = customers.remote_id and l.kind = ${sql.lit(kind)} and l.remaining > 0 ${extra}`;
  const events = (filter: ReturnType<typeof sql>) =>
    sql`from points_events e where e.shop_id = customers.shop_id and e.customer_remote_id = customers.remote_id and ${filter}`;
  await sql`
    update customers set
      points_balance = coalesce((select sum(l.remaining) ${lots('points')}), 0),
      credits_balance = coalesce((select sum(l.remaining) ${lots('credits')}), 0),
      points_earned_lifetime = coalesce((select sum(e.points_amount) ${events(sql`e.points_amount > 0`)}), 0),
      points_spent_lifetime = coalesce((select -sum(e.points_amount) ${events(sql`e.points_amount < 0 and e.source <> 'expiration'`)}), 0),
      next_expiry_at = (select min(l.expires_at) from points_lots l
        where l.shop_id = customers.shop_id and l.customer_remote_id = customers.remote_id and l.remaining > 0 and l.expires_at is not null)
    where exists (select 1 from points_events e where e.shop_id = customers.shop_id and e.customer_remote_id = customers.remote_id)`.execute(db);
  await sql`
    update customers set
      next_expiry_points = coalesce((select sum(l.remaining) ${lots('points', sql`and l.expires_at = customers.next_expiry_at`)}), 0),
      next_expiry_credits = coalesce((select sum(l.remaining) ${lots('credits', sql`and l.expires_at = customers.next_expiry_at`)}), 0)
    where next_expiry_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index points_lots_fifo`.execute(db);
  await db.schema
    .createIndex('points_lots_open')
    .on('points_lots')
    .columns(['shop_id', 'customer_remote_id', 'kind', 'expires_at', 'remaining'])
    .where(sql.ref('remaining'), '>', 0)
    .execute();
  for (const name of [
    'points_balance',
    'credits_balance',
    'points_pending',
    'points_earned_lifetime',
    'points_spent_lifetime',
    'next_expiry_at',
    'next_expiry_points',
    'next_expiry_credits',
  ]) {
    await db.schema.alterTable('customers').dropColumn(name).execute();
  }
}
