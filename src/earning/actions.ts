import { sql } from 'kysely';
import { isoTime } from '../clock.js';
import { parseCustomerIdentifier } from '../core/ids.js';
import { findCustomer } from '../customers/repository.js';
import type { DB } from '../db/tables.js';
import { AppError, notFound } from '../errors.js';
import { eventJson } from '../ledger/event-json.js';
import { findEvent } from '../ledger/events-repository.js';
import { posting } from '../ledger/posting.js';
import type { PointsEvent } from '../ledger/schemas.js';
import type { Shop } from '../shops/repository.js';
import { postWithEffects } from './effects.js';
import { defaultExpiry } from './rules.js';
import { countGrant, periodOf, wayById, wayByName, type WayToEarn } from './ways-to-earn.js';

// A customer does a way to earn (docs/earning.md, "Ways to earn"): the merchant says so
// (POST /customers/{customer_identifier}/actions, by the rule's name and the action's
// distinct_id) or the shopper claims it (POST /storefront_api/v1/me/actions, by the rule's id).
// In the caller's transaction: the distinct_id is taken (an action already granted answers its
// first event), the customer's count for the rule's period goes up unless it is at the limit
// (limit_reached), and the grant posts through the ledger. Each is one statement on one row
// (migration 025), so the cost is the same whatever the customer did before.

export interface ActionDone {
  /** 201 for a new grant, 200 for the event an earlier action of the same distinct_id granted. */
  status: 200 | 201;
  event: PointsEvent;
}

const notFoundRule = (what: string) => new AppError('rule_not_found', `The shop has no enabled custom_action or visit_url rule ${what}`);

/**
 * Takes the distinct_id for the customer, or says which event its first action granted. A
 * racing action of the same distinct_id waits for the first to commit (PostgreSQL) and then
 * finds its event; its row is written with event id 0 and given the event's id in the events'
 * statement, so a committed row always names its event.
 */
async function takeDistinctId(trx: DB, shopId: number, remoteId: number, distinctId: string, ruleId: number, now: number): Promise<number | null> {
  const { rows } = await sql`insert into earning_action_claims (shop_id, customer_remote_id, distinct_id, rule_id, points_event_id, created_at)
    values (${shopId}, ${remoteId}, ${distinctId}, ${ruleId}, 0, ${now}) on conflict do nothing returning rule_id`.execute(trx);
  if (rows.length > 0) return null;
  const first = await trx
    .selectFrom('earning_action_claims')
    .select('points_event_id')
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', '=', remoteId)
    .where('distinct_id', '=', distinctId)
    .executeTakeFirstOrThrow();
  return Number(first.points_event_id);
}

function limitReached(way: WayToEarn, next: number | null): AppError {
  const times = `${way.limitCount} time${way.limitCount === 1 ? '' : 's'}`;
  const message =
    next === null
      ? `${way.name} may be done ${times} in a customer's lifetime; this customer has done it`
      : `${way.name} may be done ${times} per ${way.limitPeriod}; the customer may do it again at ${isoTime(next)}`;
  const availableAt = next === null ? null : isoTime(next);
  return new AppError('limit_reached', message, { details: [{ param: 'name', code: 'limit_reached', message, available_at: availableAt }] });
}

/** Grants the way to the customer (remote id, not yet known to exist), within its limit. */
async function grant(trx: DB, shop: Shop, remoteId: number, way: WayToEarn, distinctId: string | null, now: number): Promise<ActionDone> {
  if (distinctId !== null) {
    const first = await takeDistinctId(trx, shop.id, remoteId, distinctId, way.id, now);
    if (first !== null) {
      const row = (await findEvent(trx, shop.id, first))!;
      return { status: 200, event: eventJson(row, row.email, row.reversed_by_event_id) };
    }
  }
  const period = periodOf(way, now, shop.timezone);
  if (!(await countGrant(trx, shop.id, remoteId, way, period.start, now))) throw limitReached(way, period.next);
  const entry = posting(
    { remoteId, email: null },
    {
      source: way.kind,
      points: way.points,
      credits: way.credits,
      customActionName: way.name,
      appliedAt: now,
      expiresAt: defaultExpiry(shop, now),
      earningRuleId: way.id,
    },
  );
  const alongside = {
    rows: (_: undefined, [eventId]: readonly number[]) =>
      distinctId === null
        ? []
        : [
            {
              update: 'earning_action_claims' as const,
              key: ['shop_id', 'customer_remote_id', 'distinct_id'],
              rows: [{ shop_id: shop.id, customer_remote_id: remoteId, distinct_id: distinctId, points_event_id: eventId! }],
            },
          ],
  };
  const posted = await postWithEffects(trx, shop.id, [entry], now, { resolve: true, alongside });
  if (posted.failures.length > 0) throw notFound('customer', remoteId);
  return { status: 201, event: posted.events[0]! };
}

/** The merchant's action: the rule by name, the customer by remote_id or e-mail. */
export async function doAction(trx: DB, shop: Shop, identifier: string, name: string, distinctId: string | null, now: number): Promise<ActionDone> {
  const parsed = parseCustomerIdentifier(identifier);
  // An e-mail is looked up first: the ledger locks customers by remote id.
  const remoteId = parsed !== null && 'email' in parsed ? (await findCustomer(trx, shop.id, identifier))?.remote_id : parsed?.remoteId;
  if (remoteId === undefined || remoteId === null) throw notFound('customer', identifier);
  const way = await wayByName(trx, shop.id, name);
  if (way === undefined) throw notFoundRule(`named ${JSON.stringify(name)}`);
  return grant(trx, shop, Number(remoteId), way, distinctId, now);
}

/** The shopper's claim: a claimable rule by id, for the customer their token names. */
export async function claimAction(trx: DB, shop: Shop, remoteId: number, ruleId: number, now: number): Promise<ActionDone> {
  const way = await wayById(trx, shop.id, ruleId);
  if (way === undefined || !way.claimable) throw notFoundRule(`with id ${ruleId} that a shopper may claim`);
  return grant(trx, shop, remoteId, way, null, now);
}
