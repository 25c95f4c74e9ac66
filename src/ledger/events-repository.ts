import type { Selectable } from 'kysely';
import type { DB, PointsEventsTable } from '../db/tables.js';

// The append-only ledger: events are inserted, read and listed, never updated or deleted.

export type EventRow = Selectable<PointsEventsTable> & { email: string | null; reversed_by_event_id: number | null };

export interface EventFilters {
  customerRemoteId?: number;
  /** The events an order earned or had clawed back. */
  orderRemoteId?: number;
  source?: string;
  appliedAt?: { gt?: number; gte?: number; lt?: number; lte?: number };
}

/** The shop's events matching the filters, with each customer's current e-mail; unordered, for paginate. */
export function eventsQuery(db: DB, shopId: number, filters: EventFilters = {}) {
  let query = db
    .selectFrom('points_events')
    .leftJoin('customers', (join) =>
      join.onRef('customers.shop_id', '=', 'points_events.shop_id').onRef('customers.remote_id', '=', 'points_events.customer_remote_id'),
    )
    .leftJoin('points_events as reversal', (join) =>
      join.onRef('reversal.shop_id', '=', 'points_events.shop_id').onRef('reversal.reverses_event_id', '=', 'points_events.id'),
    )
    .selectAll('points_events')
    .select(['customers.email', 'reversal.id as reversed_by_event_id'])
    .where('points_events.shop_id', '=', shopId);
  if (filters.customerRemoteId !== undefined) query = query.where('points_events.customer_remote_id', '=', filters.customerRemoteId);
  if (filters.orderRemoteId !== undefined) query = query.where('points_events.order_remote_id', '=', filters.orderRemoteId);
  if (filters.source !== undefined) query = query.where('points_events.source', '=', filters.source);
  const range = filters.appliedAt ?? {};
  if (range.gt !== undefined) query = query.where('points_events.applied_at', '>', range.gt);
  if (range.gte !== undefined) query = query.where('points_events.applied_at', '>=', range.gte);
  if (range.lt !== undefined) query = query.where('points_events.applied_at', '<', range.lt);
  if (range.lte !== undefined) query = query.where('points_events.applied_at', '<=', range.lte);
  return query;
}

/** When each order's points were first granted (its first `order` grant), by order. */
export async function orderGrantTimes(db: DB, shopId: number, orderIds: readonly number[]): Promise<Map<number, number>> {
  const granted = new Map<number, number>();
  for (let i = 0; i < orderIds.length; i += 500) {
    const rows = await db
      .selectFrom('points_events')
      .select(['order_remote_id', (eb) => eb.fn.min<number>('applied_at').as('at')])
      .where('shop_id', '=', shopId)
      .where('order_remote_id', 'in', orderIds.slice(i, i + 500))
      .where('source', '=', 'order')
      .where('points_amount', '>', 0)
      .groupBy('order_remote_id')
      .execute();
    for (const row of rows) granted.set(Number(row.order_remote_id), Number(row.at));
  }
  return granted;
}

/** Whether the shop has the order (its events may be none). */
export async function orderExists(db: DB, shopId: number, remoteId: number): Promise<boolean> {
  return (await db.selectFrom('orders').select('remote_id').where('shop_id', '=', shopId).where('remote_id', '=', remoteId).executeTakeFirst()) !== undefined;
}

export async function findEvent(db: DB, shopId: number, id: number): Promise<EventRow | undefined> {
  return eventsQuery(db, shopId).where('points_events.id', '=', id).executeTakeFirst();
}
