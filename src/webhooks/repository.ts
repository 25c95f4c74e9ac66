import { sql, type Selectable } from 'kysely';
import { claimClause } from '../db/dialect.js';
import type { DB, DeliveryStatus, WebhookAttemptsTable, WebhookDeliveriesTable } from '../db/tables.js';
import { pushTo } from '../core/maps.js';

// The SQL of the webhook outbox. Every function takes the database handle first (the caller
// owns the transaction); the job's claim and prune work across shops, everything else is
// scoped to one.

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** A delivery claimed for sending, with where to send it and how to sign it. */
export interface ClaimedDelivery {
  shop_id: number;
  id: number;
  webhook_id: number;
  event_id: string;
  topic: string;
  payload: string;
  /** The number of this attempt (1 for the first). */
  attempt: number;
  url: string;
  secret: string;
}

// Partial indexes are used only when the query names the same literal (SQLite).
const PENDING = sql.lit('pending');

/** One webhook's deliveries of one topic: the job serves the groups with due deliveries in turn. */
export interface DeliveryGroup {
  shop_id: number;
  webhook_id: number;
  topic: string;
}

/** What one claim may take. */
export interface ClaimLimits {
  /** Deliveries claimed at most. */
  limit: number;
  /** Deliveries of one webhook in flight at once at most, those already in flight included. */
  perWebhook: number;
  /** Deliveries in flight per webhook (webhookKey), already claimed by this worker. */
  busy: ReadonlyMap<string, number>;
  /** The last group of the previous claim's scan, when that scan stopped short of the end; null: from the start. */
  after: DeliveryGroup | null;
}

export interface Claim {
  deliveries: ClaimedDelivery[];
  /** Where the next claim's scan of groups begins (`after`). */
  next: DeliveryGroup | null;
}

/** Groups with pending deliveries looked at by one claim, at most. */
const GROUPS_PER_CLAIM = 100;

export const webhookKey = (d: { shop_id: number; webhook_id: number }): string => `${d.shop_id}:${d.webhook_id}`;

/** A due delivery of the claim's group number `n`, as read. */
type ClaimRow = Omit<ClaimedDelivery, 'attempt'> & { n: number; attempt_count: number; next_attempt_at: number };

/**
 * Up to GROUPS_PER_CLAIM groups with pending deliveries (due or not) after `after`, in key
 * order, found by a loose scan of webhook_deliveries_pending_groups: one index probe per group,
 * so a group of 10,000 deliveries costs what a group of one does.
 */
async function pendingGroups(db: DB, after: DeliveryGroup | null): Promise<DeliveryGroup[]> {
  const from = after ?? { shop_id: 0, webhook_id: 0, topic: '' };
  const { rows } = await sql<DeliveryGroup>`
    with recursive g(shop_id, webhook_id, topic, n) as (
      select f.shop_id, f.webhook_id, f.topic, 1 from (
        select shop_id, webhook_id, topic from webhook_deliveries
        where status = 'pending' and (shop_id, webhook_id, topic) > (${from.shop_id}, ${from.webhook_id}, ${from.topic})
        order by shop_id, webhook_id, topic limit 1) f
      union all
      select d.shop_id, d.webhook_id, d.topic, g.n + 1 from g
      join webhook_deliveries d on (d.shop_id, d.id) = (
        select x.shop_id, x.id from webhook_deliveries x
        where x.status = 'pending' and (x.shop_id, x.webhook_id, x.topic) > (g.shop_id, g.webhook_id, g.topic)
        order by x.shop_id, x.webhook_id, x.topic limit 1)
      where g.n < ${GROUPS_PER_CLAIM}
    )
    select shop_id, webhook_id, topic from g`.execute(db);
  return rows.map((row) => ({ shop_id: Number(row.shop_id), webhook_id: Number(row.webhook_id), topic: row.topic }));
}

/** The oldest due deliveries of each group, at most `perGroup` of each, locked (PostgreSQL: rows another worker holds are skipped). */
async function dueOfGroups(trx: DB, now: number, groups: readonly DeliveryGroup[], perGroup: number): Promise<ClaimRow[]> {
  if (groups.length === 0) return [];
  const values = sql.join(groups.map((g, n) => sql`(${n}, cast(${g.shop_id} as bigint), cast(${g.webhook_id} as bigint), cast(${g.topic} as text))`));
  const { rows } = await sql<ClaimRow>`
    with g(n, shop_id, webhook_id, topic) as (values ${values})
    select g.n, d.shop_id, d.id, d.webhook_id, d.event_id, d.topic, d.payload, d.attempt_count, d.next_attempt_at, w.url, w.secret
    from g
    join webhook_deliveries d on d.shop_id = g.shop_id and d.id in (
      select x.id from webhook_deliveries x
      where x.shop_id = g.shop_id and x.webhook_id = g.webhook_id and x.topic = g.topic and x.status = 'pending' and x.next_attempt_at <= ${now}
      order by x.next_attempt_at, x.id limit ${perGroup})
    join webhooks w on w.shop_id = d.shop_id and w.id = d.webhook_id
    where d.status = 'pending' and d.next_attempt_at <= ${now}
    ${claimClause(trx, 'd')}`.execute(trx);
  return rows;
}

/**
 * Takes deliveries in turns across groups: every group's oldest first, then every group's
 * second, and so on (oldest due first within a turn), within the limits.
 */
function takeInTurns(rows: readonly ClaimRow[], limits: ClaimLimits): ClaimRow[] {
  const turn = new Map<ClaimRow, number>();
  const byGroup = new Map<number, ClaimRow[]>();
  for (const row of rows) pushTo(byGroup, Number(row.n), row);
  for (const group of byGroup.values()) {
    group.sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || Number(a.id) - Number(b.id));
    group.forEach((row, i) => turn.set(row, i));
  }
  const ordered = [...rows].sort((a, b) => turn.get(a)! - turn.get(b)! || Number(a.next_attempt_at) - Number(b.next_attempt_at) || Number(a.n) - Number(b.n));
  const perWebhook = new Map(limits.busy);
  const taken: ClaimRow[] = [];
  for (const row of ordered) {
    if (taken.length >= limits.limit) break;
    const key = webhookKey({ shop_id: Number(row.shop_id), webhook_id: Number(row.webhook_id) });
    const inFlight = perWebhook.get(key) ?? 0;
    if (inFlight >= limits.perWebhook) continue;
    perWebhook.set(key, inFlight + 1);
    taken.push(row);
  }
  return taken;
}

/**
 * Claims due deliveries, serving webhooks and topics in turns (takeInTurns), so that one
 * webhook's or topic's backlog never holds up the others' deliveries. Each claimed delivery is
 * leased until `leaseUntil` (its next_attempt_at moves there) and its attempt is counted, so no
 * other worker sends it meanwhile and a worker that dies mid-send only delays it. Deliveries
 * of deleted webhooks are gone (ON DELETE CASCADE); the join also reads the webhook's current
 * url and secret.
 */
export async function claimDueDeliveries(trx: DB, now: number, leaseUntil: number, limits: ClaimLimits): Promise<Claim> {
  const groups = await pendingGroups(trx, limits.after);
  const taken = takeInTurns(await dueOfGroups(trx, now, groups, limits.perWebhook), limits);
  const byShop = new Map<number, number[]>();
  for (const row of taken) pushTo(byShop, Number(row.shop_id), Number(row.id));
  for (const [shopId, ids] of byShop) {
    await trx
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: leaseUntil, attempt_count: sql`attempt_count + 1`, last_attempt_at: now })
      .where('shop_id', '=', shopId)
      .where('id', 'in', ids)
      .execute();
  }
  return {
    deliveries: taken.map((row) => ({
      shop_id: Number(row.shop_id),
      id: Number(row.id),
      webhook_id: Number(row.webhook_id),
      event_id: row.event_id,
      topic: row.topic,
      payload: row.payload,
      attempt: Number(row.attempt_count) + 1,
      url: row.url,
      secret: row.secret,
    })),
    // A scan that stopped short of the end goes on from its last group next time.
    next: groups.length === GROUPS_PER_CLAIM ? groups[groups.length - 1]! : null,
  };
}

export interface Settlement {
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  attemptedAt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records the outcome of an attempt: the delivery's new state and one attempt row. Returns
 * false when the delivery is gone (its webhook was deleted while it was being sent).
 */
export async function settleDelivery(trx: DB, delivery: ClaimedDelivery, s: Settlement, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({
      status: s.status,
      next_attempt_at: s.nextAttemptAt,
      last_status_code: s.statusCode,
      last_error: s.error,
      ...(s.status === 'delivered' ? { delivered_at: now } : {}),
      updated_at: now,
    })
    .where('shop_id', '=', delivery.shop_id)
    .where('id', '=', delivery.id)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await trx
    .insertInto('webhook_attempts')
    .values({
      shop_id: delivery.shop_id,
      delivery_id: delivery.id,
      attempt: delivery.attempt,
      attempted_at: s.attemptedAt,
      status_code: s.statusCode,
      error: s.error,
      duration_ms: s.durationMs,
    })
    // A manual retry may race an automatic attempt of the same number; the first one stays.
    .onConflict((oc) => oc.doNothing())
    .execute();
  return true;
}

/** A webhook's deliveries, unordered: the list endpoint pages it. */
export function deliveriesQuery(db: DB, shopId: number, webhookId: number, status?: DeliveryStatus) {
  const query = db.selectFrom('webhook_deliveries').selectAll().where('shop_id', '=', shopId).where('webhook_id', '=', webhookId);
  return status === undefined ? query : query.where('status', '=', status);
}

/** The attempts of these deliveries, by delivery, in order. */
export async function attemptsOf(db: DB, shopId: number, deliveryIds: readonly number[]): Promise<Map<number, AttemptRow[]>> {
  const out = new Map<number, AttemptRow[]>();
  if (deliveryIds.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('shop_id', '=', shopId)
    .where('delivery_id', 'in', [...deliveryIds])
    .orderBy('delivery_id')
    .orderBy('attempt')
    .execute();
  for (const row of rows) pushTo(out, Number(row.delivery_id), row);
  return out;
}

/** Makes a delivery due now, whatever its state (a merchant's "resend"). */
export async function requeueDelivery(trx: DB, shopId: number, webhookId: number, id: number, now: number): Promise<DeliveryRow | undefined> {
  return trx
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, updated_at: now })
    .where('shop_id', '=', shopId)
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes settled (delivered or failed) deliveries last changed before `olderThan`, with their attempts. */
export async function pruneDeliveries(db: DB, olderThan: number): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '<>', PENDING as never)
    .where('updated_at', '<', olderThan)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
