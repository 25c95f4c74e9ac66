import { sql, type RawBuilder } from 'kysely';
import { DAY_MS } from '../clock.js';
import type { DB } from '../db/tables.js';
import { TOTALS_CHECKS, type Check } from './verify-totals.js';

// `loyalty verify`: every invariant of the ledger (docs/ledger.md, "Invariants"), checked
// from scratch by summing history, which nothing else ever does. Each check is one query that
// returns the rows that break it.

export interface Discrepancy {
  shop_id: number;
  check: string;
  /** What is wrong: `customer 12`, `lot 7`, `event 40`. */
  subject: string;
  expected: string;
  actual: string;
}

const eventSums = (column: string, filter = sql`true`) =>
  sql`(select shop_id, customer_remote_id, sum(${sql.ref(column)}) as total from points_events where ${filter} group by shop_id, customer_remote_id)`;
const lotSums = (kind: string) =>
  sql`(select shop_id, customer_remote_id, sum(remaining) as total from points_lots where kind = ${kind} and remaining > 0 group by shop_id, customer_remote_id)`;
const customer = sql`'customer ' || cast(c.remote_id as text)`;
/** A refund's clawback of what an order earned: it lowers the points earned, not raises the spent. */
const CLAWBACK = sql`(source = 'refund' and order_remote_id is not null)`;

/**
 * What changed the points earned, per customer and day the points were earned: a grant on its
 * applied_at, a reversed grant on the grant's, a clawback on its order's first grant's.
 */
const earnedDays = sql`(select shop_id, customer_remote_id, day, sum(points) as points from (
    select e.shop_id, e.customer_remote_id, e.points_amount as points,
      case
        when e.points_amount > 0 then e.applied_at
        when e.source = 'reversal' then (select r.applied_at from points_events r where r.shop_id = e.shop_id and r.id = e.reverses_event_id)
        else coalesce((select min(g.applied_at) from points_events g where g.shop_id = e.shop_id and g.order_remote_id = e.order_remote_id
          and g.source = 'order' and g.points_amount > 0), e.applied_at)
      end / ${sql.lit(DAY_MS)} as day
    from points_events e
    where (e.points_amount > 0 and e.source <> 'reversal') or (e.points_amount < 0 and (e.source = 'reversal' or ${CLAWBACK}))
  ) x group by shop_id, customer_remote_id, day)`;

/** A stored customer column against a sum over history (absent sums are 0). */
function storedAgainst(name: string, column: string, sums: RawBuilder<unknown>, negate = false): Check {
  return {
    name,
    query: (
      shop,
    ) => sql`select c.shop_id, ${customer} as subject, ${negate ? sql`-coalesce(s.total, 0)` : sql`coalesce(s.total, 0)`} as expected, c.${sql.raw(column)} as actual
      from customers c left join ${sums} s on s.shop_id = c.shop_id and s.customer_remote_id = c.remote_id
      where ${shop('c.shop_id')} and c.${sql.raw(column)} <> ${negate ? sql`-coalesce(s.total, 0)` : sql`coalesce(s.total, 0)`}`,
  };
}

/** An event's amount of one kind = what the lots it created hold at first, less what it took from lots (a reversal's give-backs are negative). */
function eventMoves(kind: 'points' | 'credits'): Check {
  const amount = sql.raw(`e.${kind}_amount`);
  const moved = sql`coalesce(g.total, 0) - coalesce(d.total, 0)`;
  return {
    name: `${kind} of each event = its lots less what it took from lots`,
    query: (shop) => sql`select e.shop_id, 'event ' || cast(e.id as text) as subject, ${amount} as expected, ${moved} as actual
      from points_events e
      left join (select shop_id, event_id, sum(amount) as total from points_lots where kind = ${kind} group by shop_id, event_id) g
        on g.shop_id = e.shop_id and g.event_id = e.id
      left join (select lc.shop_id, lc.event_id, sum(lc.amount) as total from lot_consumptions lc
          join points_lots l on l.shop_id = lc.shop_id and l.id = lc.lot_id where l.kind = ${kind} group by lc.shop_id, lc.event_id) d
        on d.shop_id = e.shop_id and d.event_id = e.id
      where ${shop('e.shop_id')} and ${amount} <> ${moved}`,
  };
}

const CHECKS: Check[] = [
  storedAgainst("points_balance = the sum of the customer's events", 'points_balance', eventSums('points_amount')),
  storedAgainst("credits_balance = the sum of the customer's events", 'credits_balance', eventSums('credits_amount')),
  storedAgainst("points_balance = what the customer's points lots hold", 'points_balance', lotSums('points')),
  storedAgainst("credits_balance = what the customer's credits lots hold", 'credits_balance', lotSums('credits')),
  // A reversal takes back from what the event it undoes counted: a grant's points from the earned, a deduction's from the spent.
  storedAgainst(
    "points_earned_lifetime = the points granted, less reversed grants and refunds' clawbacks",
    'points_earned_lifetime',
    eventSums('points_amount', sql`(points_amount > 0 and source <> 'reversal') or (points_amount < 0 and (source = 'reversal' or ${CLAWBACK}))`),
  ),
  {
    name: "each day's earned points = what the events that changed the points earned count on that day",
    query: (shop) => sql`select coalesce(d.shop_id, x.shop_id) as shop_id,
        'customer ' || cast(coalesce(d.customer_remote_id, x.customer_remote_id) as text) || ', day ' || cast(coalesce(d.day, x.day) as text) as subject,
        coalesce(x.points, 0) as expected, coalesce(d.points, 0) as actual
      from customer_earned_days d full join ${earnedDays} x on x.shop_id = d.shop_id and x.customer_remote_id = d.customer_remote_id and x.day = d.day
      where ${shop('coalesce(d.shop_id, x.shop_id)')} and coalesce(d.points, 0) <> coalesce(x.points, 0)`,
  },
  {
    name: 'points_earned_window = the earned days from tier_window_from on',
    query: (shop) => sql`select c.shop_id, ${customer} as subject, coalesce(s.total, 0) as expected, c.points_earned_window as actual
      from customers c left join (select d.shop_id, d.customer_remote_id, sum(d.points) as total from customer_earned_days d join customers k
          on k.shop_id = d.shop_id and k.remote_id = d.customer_remote_id and d.day >= k.tier_window_from group by d.shop_id, d.customer_remote_id) s
        on s.shop_id = c.shop_id and s.customer_remote_id = c.remote_id
      where ${shop('c.shop_id')} and c.points_earned_window <> coalesce(s.total, 0)`,
  },
  storedAgainst(
    'points_spent_lifetime = the points deducted, less reversed deductions',
    'points_spent_lifetime',
    eventSums(
      'points_amount',
      sql`(points_amount < 0 and source not in ('expiration', 'reversal') and not ${CLAWBACK}) or (points_amount > 0 and source = 'reversal')`,
    ),
    true,
  ),
  storedAgainst(
    "points_pending = what the customer's orders hold pending",
    'points_pending',
    sql`(select shop_id, points_customer_remote_id as customer_remote_id, sum(points_pending) as total from orders where points_pending > 0 group by shop_id, points_customer_remote_id)`,
  ),
  {
    name: "each lot's remaining = its amount less its consumptions",
    query: (shop) => sql`select l.shop_id, 'lot ' || cast(l.id as text) as subject, l.amount - coalesce(s.total, 0) as expected, l.remaining as actual
      from points_lots l left join (select shop_id, lot_id, sum(amount) as total from lot_consumptions group by shop_id, lot_id) s
        on s.shop_id = l.shop_id and s.lot_id = l.id
      where ${shop('l.shop_id')} and l.remaining <> l.amount - coalesce(s.total, 0)`,
  },
  {
    name: 'lots hold between 0 and their amount, and grant something',
    query: (shop) => sql`select shop_id, 'lot ' || cast(id as text) as subject, '0 < amount, 0 <= remaining <= amount' as expected,
        'amount ' || cast(amount as text) || ', remaining ' || cast(remaining as text) as actual
      from points_lots where ${shop('shop_id')} and (amount <= 0 or remaining < 0 or remaining > amount)`,
  },
  {
    name: 'consumptions take something; only a reversal gives back (a negative one)',
    query: (shop) => sql`select c.shop_id, 'consumption of lot ' || cast(c.lot_id as text) || ' by event ' || cast(c.event_id as text) as subject,
        case when e.source = 'reversal' then '<> 0' else '> 0' end as expected, c.amount as actual
      from lot_consumptions c join points_events e on e.shop_id = c.shop_id and e.id = c.event_id
      where ${shop('c.shop_id')} and (c.amount = 0 or (c.amount < 0 and e.source <> 'reversal'))`,
  },
  {
    name: 'stored balances are not negative',
    query: (shop) => sql`select shop_id, ${sql`'customer ' || cast(remote_id as text)`} as subject, '>= 0' as expected,
        'points ' || cast(points_balance as text) || ', credits ' || cast(credits_balance as text) || ', pending ' || cast(points_pending as text) as actual
      from customers where ${shop('shop_id')} and (points_balance < 0 or credits_balance < 0 or points_pending < 0 or points_earned_lifetime < 0 or points_spent_lifetime < 0)`,
  },
  eventMoves('points'),
  eventMoves('credits'),
  {
    name: 'next_expiry_at = the earliest expiry among lots that hold something',
    query: (
      shop,
    ) => sql`select c.shop_id, ${customer} as subject, coalesce(cast(n.at as text), 'null') as expected, coalesce(cast(c.next_expiry_at as text), 'null') as actual
      from customers c left join (select shop_id, customer_remote_id, min(expires_at) as at from points_lots where remaining > 0 and expires_at is not null group by shop_id, customer_remote_id) n
        on n.shop_id = c.shop_id and n.customer_remote_id = c.remote_id
      where ${shop('c.shop_id')} and coalesce(c.next_expiry_at, -1) <> coalesce(n.at, -1)`,
  },
  {
    name: 'next_expiry_points and _credits = what the lots expiring then hold',
    query: (shop) => sql`select c.shop_id, ${customer} as subject,
        cast(coalesce(p.total, 0) as text) || ' points, ' || cast(coalesce(k.total, 0) as text) || ' credits' as expected,
        cast(c.next_expiry_points as text) || ' points, ' || cast(c.next_expiry_credits as text) || ' credits' as actual
      from customers c
      left join (select shop_id, customer_remote_id, expires_at, sum(remaining) as total from points_lots where kind = 'points' and remaining > 0 group by shop_id, customer_remote_id, expires_at) p
        on p.shop_id = c.shop_id and p.customer_remote_id = c.remote_id and p.expires_at = c.next_expiry_at
      left join (select shop_id, customer_remote_id, expires_at, sum(remaining) as total from points_lots where kind = 'credits' and remaining > 0 group by shop_id, customer_remote_id, expires_at) k
        on k.shop_id = c.shop_id and k.customer_remote_id = c.remote_id and k.expires_at = c.next_expiry_at
      where ${shop('c.shop_id')} and (c.next_expiry_points <> coalesce(p.total, 0) or c.next_expiry_credits <> coalesce(k.total, 0))`,
  },
  {
    name: 'every event belongs to a customer of its shop',
    query: (
      shop,
    ) => sql`select e.shop_id, 'event ' || cast(e.id as text) as subject, 'customer ' || cast(e.customer_remote_id as text) as expected, 'no such customer' as actual
      from points_events e where ${shop('e.shop_id')}
        and not exists (select 1 from customers c where c.shop_id = e.shop_id and c.remote_id = e.customer_remote_id)`,
  },
  {
    name: "each day's order sums = what the orders count on that day (customer_order_days)",
    query: (shop) => sql`select coalesce(d.shop_id, x.shop_id) as shop_id,
        'customer ' || cast(coalesce(d.customer_remote_id, x.customer_remote_id) as text) || ', day ' || cast(coalesce(d.day, x.day) as text) || ' ' || coalesce(d.currency, x.currency) as subject,
        cast(coalesce(x.amount, 0) as text) || ' in ' || cast(coalesce(x.orders, 0) as text) || ' orders' as expected,
        cast(coalesce(d.amount, 0) as text) || ' in ' || cast(coalesce(d.orders, 0) as text) || ' orders' as actual
      from (select * from customer_order_days where amount <> 0 or orders <> 0) d
      full join (select shop_id, counted_customer_remote_id as customer_remote_id, counted_day as day, counted_currency as currency,
          sum(counted_amount) as amount, count(*) as orders from orders where counted_customer_remote_id is not null
          group by shop_id, counted_customer_remote_id, counted_day, counted_currency) x
        on x.shop_id = d.shop_id and x.customer_remote_id = d.customer_remote_id and x.day = d.day and x.currency = d.currency
      where ${shop('coalesce(d.shop_id, x.shop_id)')} and (coalesce(d.amount, 0) <> coalesce(x.amount, 0) or coalesce(d.orders, 0) <> coalesce(x.orders, 0))`,
  },
  {
    name: "each customer holds the highest tier their value in the shop's metric reaches, or one retained (shops not being re-tiered)",
    query: (
      shop,
    ) => sql`select c.shop_id, ${customer} as subject, coalesce(cast(c.expected as text), 'none') as expected, coalesce(cast(c.vip_tier_id as text), 'none') as actual
      from (select c.*, (select t.id from vip_tiers t where t.shop_id = c.shop_id
          and t.points_threshold * (case when s.vip_tier_metric = 'amount_spent' then 100 else 1 end)
            <= (case s.vip_tier_metric when 'amount_spent' then c.amount_spent_window when 'orders_count' then c.orders_count_window else c.points_earned_window end)
          order by t.points_threshold desc limit 1) as expected
        from customers c join shops s on s.id = c.shop_id and s.retier_after is null) c
      where ${shop('c.shop_id')} and coalesce(c.expected, -1) <> coalesce(c.vip_tier_id, -1) and c.vip_tier_retained_until is null`,
  },
  {
    name: 'each redemption spent its points_spent by its own reward_redemption event',
    query: (shop) => sql`select r.shop_id, 'redemption ' || cast(r.id as text) as subject,
        'event ' || cast(r.points_event_id as text) || ': reward_redemption of ' || cast(-r.points_spent as text) || ' points by customer ' || cast(r.customer_remote_id as text) as expected,
        coalesce('event ' || cast(e.id as text) || ': ' || e.source || ' of ' || cast(e.points_amount as text) || ' points by customer ' || cast(e.customer_remote_id as text), 'no such event') as actual
      from redemptions r left join points_events e on e.shop_id = r.shop_id and e.id = r.points_event_id
      where ${shop('r.shop_id')} and (e.id is null or e.source <> 'reward_redemption' or e.points_amount <> -r.points_spent
        or e.customer_remote_id <> r.customer_remote_id or coalesce(e.redemption_id, -1) <> r.id)`,
  },
  {
    name: 'a redemption is voided exactly when a reversal undid its event',
    query: (shop) => sql`select r.shop_id, 'redemption ' || cast(r.id as text) as subject,
        case when r.status = 'voided' then 'reversed by event ' || coalesce(cast(r.void_event_id as text), '?') else 'not reversed' end as expected,
        coalesce('reversed by event ' || cast(v.id as text), 'not reversed') as actual
      from redemptions r left join points_events v on v.shop_id = r.shop_id and v.reverses_event_id = r.points_event_id
      where ${shop('r.shop_id')} and (case when r.status = 'voided' then v.id is null or r.void_event_id is null or v.id <> r.void_event_id else v.id is not null end)`,
  },
  {
    name: 'an issued pool code belongs to the redemption that holds it',
    query: (
      shop,
    ) => sql`select k.shop_id, 'code ' || cast(k.id as text) as subject, 'redemption ' || cast(k.redemption_id as text) || ' with code ' || k.code as expected,
        coalesce('redemption ' || cast(r.id as text) || ' with code ' || r.code, 'no such redemption') as actual
      from reward_codes k left join redemptions r on r.shop_id = k.shop_id and r.id = k.redemption_id
      where ${shop('k.shop_id')} and k.redemption_id is not null and (r.id is null or r.code <> k.code or r.reward_id <> k.reward_id)`,
  },
];

/** Every discrepancy in the ledger of one shop, or of every shop; at most `limit` per check. */
export async function verifyLedger(db: DB, shopId: number | null, limit = 1000): Promise<Discrepancy[]> {
  const out: Discrepancy[] = [];
  const shop = (column: string) => (shopId === null ? sql`true` : sql`${sql.raw(column)} = ${shopId}`);
  for (const check of [...CHECKS, ...TOTALS_CHECKS]) {
    const { rows } = await sql<{ shop_id: number; subject: string; expected: unknown; actual: unknown }>`${check.query(shop, db)} limit ${limit}`.execute(db);
    for (const row of rows)
      out.push({ shop_id: Number(row.shop_id), check: check.name, subject: row.subject, expected: String(row.expected), actual: String(row.actual) });
  }
  // The per-shop row counts that list pages read their `last` link from; a redacted customer is not listed.
  const listed = (table: string) => (table === 'customers' ? sql`where remote_id > 0` : sql``);
  const { rows: counted } = await sql<{ table_name: string }>`select distinct table_name from shop_counts`.execute(db);
  for (const { table_name } of counted) {
    const { rows } = await sql<{
      shop_id: number;
      expected: unknown;
      actual: unknown;
    }>`select coalesce(r.shop_id, c.shop_id) as shop_id, coalesce(r.n, 0) as expected, coalesce(c.n, 0) as actual
      from (select shop_id, count(*) as n from ${sql.table(table_name)} ${listed(table_name)} group by shop_id) r
      full join (select shop_id, n from shop_counts where table_name = ${table_name}) c on c.shop_id = r.shop_id
      where ${shop('coalesce(r.shop_id, c.shop_id)')} and coalesce(r.n, 0) <> coalesce(c.n, 0) limit ${limit}`.execute(db);
    for (const row of rows) {
      out.push({
        shop_id: Number(row.shop_id),
        check: "shop_counts = the shop's rows of each listed table",
        subject: table_name,
        expected: String(row.expected),
        actual: String(row.actual),
      });
    }
  }
  return out;
}
