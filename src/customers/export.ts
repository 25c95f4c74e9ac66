import type { SelectQueryBuilder } from 'kysely';
import { isoTime } from '../clock.js';
import type { DB } from '../db/tables.js';
import { creditsToNumber } from '../ledger/balances.js';
import { eventJson } from '../ledger/event-json.js';
import { eventsQuery, type EventRow } from '../ledger/events-repository.js';
import { selectRecords } from '../records/repository.js';
import { recordsJson, type Row } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';
import { orders } from '../records/resources/orders.js';
import { referrals } from '../records/resources/referrals.js';
import { subscriptionContracts } from '../records/resources/subscription-contracts.js';
import { redemptionJson, redemptionsQuery, type RedemptionRow } from '../redemptions/repository.js';
import { emailKey } from '../referrals/email.js';
import { tierChangeJson } from '../tiers/tiers.js';

// A customer's data request (Shopify's customers/data_request): everything stored about one
// customer as one JSON document, streamed section by section and read in chunks of CHUNK rows,
// so that its size never weighs on the server's memory.

const CHUNK = 500;

/** The rows of `query` (ordered by `key`, ascending), CHUNK at a time. */
async function* chunked<T>(query: (after: number) => SelectQueryBuilder<any, any, T>, key: string): AsyncGenerator<T[]> {
  let after = Number.MIN_SAFE_INTEGER;
  for (;;) {
    const rows = await query(after).limit(CHUNK).execute();
    if (rows.length > 0) yield rows;
    if (rows.length < CHUNK) return;
    after = Number((rows[rows.length - 1] as Record<string, unknown>)[key]);
  }
}

async function* section(name: string, rows: AsyncGenerator<unknown[]>): AsyncGenerator<string> {
  yield `,${JSON.stringify(name)}:[`;
  let first = true;
  for await (const chunk of rows) {
    for (const item of chunk) {
      yield (first ? '' : ',') + JSON.stringify(item);
      first = false;
    }
  }
  yield ']';
}

async function* mapped<T>(rows: AsyncGenerator<T[]>, map: (rows: T[]) => unknown[] | Promise<unknown[]>): AsyncGenerator<unknown[]> {
  for await (const chunk of rows) yield await map(chunk);
}

/** The points lots, as the export shows them: amounts in the lot's own unit. */
function lotsOf(db: DB, shopId: number, remoteId: number): AsyncGenerator<unknown[]> {
  const lots = chunked(
    (after) =>
      db.selectFrom('points_lots').selectAll().where('shop_id', '=', shopId).where('customer_remote_id', '=', remoteId).where('id', '>', after).orderBy('id'),
    'id',
  );
  return mapped(lots, (rows) =>
    rows.map((lot) => {
      const amount = (v: number) => (lot.kind === 'credits' ? creditsToNumber(Number(v)) : Number(v));
      return {
        id: Number(lot.id),
        kind: lot.kind,
        amount: amount(lot.amount),
        remaining: amount(lot.remaining),
        expires_at: lot.expires_at === null ? null : isoTime(Number(lot.expires_at)),
        event_id: Number(lot.event_id),
        created_at: isoTime(Number(lot.created_at)),
      };
    }),
  );
}

/** The records of a resource that `narrow` keeps, as the API shows them. */
function recordsOf(
  db: DB,
  shopId: number,
  now: number,
  r: typeof orders,
  narrow: (q: SelectQueryBuilder<any, any, Row>) => SelectQueryBuilder<any, any, Row>,
): AsyncGenerator<unknown[]> {
  return mapped(
    chunked(
      (after) =>
        narrow(selectRecords(db, shopId, r))
          .where(r.id, '>', after)
          .orderBy(r.id),
      r.id,
    ),
    (rows: Row[]) => recordsJson(db, shopId, r, rows, now),
  );
}

/** The orders, subscription contracts and referrals of the customer (referrals also by the e-mail they were sent to). */
async function* recordSections(db: DB, shopId: number, remoteId: number, email: string | null, now: number): AsyncGenerator<string> {
  yield* section(
    'orders',
    recordsOf(db, shopId, now, orders, (q) =>
      q.where((eb) => eb.or([eb('customer_remote_id', '=', remoteId), eb('points_customer_remote_id', '=', remoteId)])),
    ),
  );
  yield* section(
    'subscription_contracts',
    recordsOf(db, shopId, now, subscriptionContracts, (q) => q.where('customer_remote_id', '=', remoteId)),
  );
  yield* section(
    'referrals',
    recordsOf(db, shopId, now, referrals, (q) =>
      q.where((eb) =>
        eb.or([
          eb('referrer_remote_id', '=', remoteId),
          eb('referred_remote_id', '=', remoteId),
          ...(email === null ? [] : [eb('referred_email_key', '=', emailKey(email))]),
        ]),
      ),
    ),
  );
}

/** The export document, as JSON text in pieces. */
export async function* exportDocument(db: DB, shopId: number, customer: Row, now: number): AsyncGenerator<string> {
  const remoteId = Number(customer.remote_id);
  const email = (customer.email as string | null) ?? null;
  const [shown] = await recordsJson(db, shopId, customers, [customer], now);
  yield `{"data":{"exported_at":${JSON.stringify(isoTime(now))},"customer":${JSON.stringify(shown)}`;

  const events = chunked(
    (after) => eventsQuery(db, shopId, { customerRemoteId: remoteId }).where('points_events.id', '>', after).orderBy('points_events.id'),
    'id',
  );
  yield* section(
    'points_events',
    mapped(events, (rows: EventRow[]) => rows.map((row) => eventJson(row, row.email, row.reversed_by_event_id))),
  );
  yield* section('points_lots', lotsOf(db, shopId, remoteId));
  yield* recordSections(db, shopId, remoteId, email, now);
  const redemptions = chunked(
    (after) => redemptionsQuery(db, shopId, { customerRemoteId: remoteId }).where('redemptions.id', '>', after).orderBy('redemptions.id'),
    'id',
  );
  yield* section(
    'redemptions',
    mapped(redemptions, (rows: RedemptionRow[]) => rows.map(redemptionJson)),
  );
  const tiers = chunked(
    (after) =>
      db
        .selectFrom('vip_tier_changes')
        .selectAll()
        .where('shop_id', '=', shopId)
        .where('customer_remote_id', '=', remoteId)
        .where('id', '>', after)
        .orderBy('id'),
    'id',
  );
  yield* section(
    'vip_tier_history',
    mapped(tiers, (rows) => rows.map(tierChangeJson)),
  );
  yield '}}';
}
