import { sql, type Kysely } from 'kysely';
import { shopTable } from './_schema.js';

// VIP tiers judged by the points earned in a window (docs/earning.md, "VIP tiers"): the shop's
// vip_tier_window, the points each customer earned per day (what changed the points earned,
// on the day the points were earned), and each customer's sum over the window, with the day
// the window started when it was summed.

const DAY = 86_400_000;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('shops')
    .addColumn('vip_tier_window', 'text', (c) => c.notNull().defaultTo('lifetime'))
    .execute();
  // The first day of the window the shop's customers were last re-tiered for.
  await db.schema
    .alterTable('shops')
    .addColumn('tier_window_from', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('customers')
    .addColumn('points_earned_window', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('customers')
    .addColumn('tier_window_from', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await shopTable(db, 'customer_earned_days', ['customer_remote_id', 'day'], (t) =>
    t
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('day', 'bigint', (c) => c.notNull())
      .addColumn('points', 'bigint', (c) => c.notNull()),
  ).execute();

  // The days of the events already written: a grant on its own day; a reversed grant and a
  // refund's clawback on the day of the grant they take back from (a clawback: the order's first).
  const grantDay = sql`(select min(g.applied_at) from points_events g where g.shop_id = e.shop_id and g.order_remote_id = e.order_remote_id
    and g.customer_remote_id = e.customer_remote_id and g.points_amount > 0 and g.source <> 'reversal')`;
  await sql`insert into customer_earned_days (shop_id, customer_remote_id, day, points)
    select shop_id, customer_remote_id, day, sum(points) from (
      select e.shop_id, e.customer_remote_id, e.points_amount as points,
        case
          when e.points_amount > 0 then e.applied_at
          when e.source = 'reversal' then (select r.applied_at from points_events r where r.shop_id = e.shop_id and r.id = e.reverses_event_id)
          else coalesce(${grantDay}, e.applied_at)
        end / ${sql.lit(DAY)} as day
      from points_events e
      where (e.points_amount > 0 and e.source <> 'reversal')
        or (e.points_amount < 0 and (e.source = 'reversal' or (e.source = 'refund' and e.order_remote_id is not null)))
    ) x group by shop_id, customer_remote_id, day`.execute(db);
  await sql`update customers set points_earned_window = points_earned_lifetime`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('customer_earned_days').execute();
  await db.schema.alterTable('customers').dropColumn('tier_window_from').execute();
  await db.schema.alterTable('customers').dropColumn('points_earned_window').execute();
  await db.schema.alterTable('shops').dropColumn('tier_window_from').execute();
  await db.schema.alterTable('shops').dropColumn('vip_tier_window').execute();
}
