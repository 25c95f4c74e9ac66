import type { Selectable } from 'kysely';
import type { CustomersTable, DB } from '../db/tables.js';
import { balancesAt } from '../ledger/balances.js';
import { customerComputed } from '../records/resources/customers.js';
import type { Shop } from '../shops/repository.js';
import type { Tier } from '../tiers/tiers.js';
import { upcomingExpiries } from './expiries.js';

// What /me shows (the `Me` schema, docs/storefront.md): the fields of the merchant API's
// Customer that the shopper sees, computed by the record's own customerComputed
// (records/resources/customers.ts; test/storefront/me.test.ts holds the two equal), and
// upcoming_expiries. Built from the row, the shop and its tiers the caller already holds, rather
// than as the whole record, whose computed fields read the shop and its tiers again. meBody
// writes the answer byte for byte as the schema's serialiser would.

type CustomerRow = Selectable<CustomersTable>;

/** The customer as /me shows it at `now`, read in the caller's snapshot. */
export async function meJson(db: DB, shop: Shop, tiers: readonly Tier[], row: CustomerRow, now: number) {
  const remoteId = Number(row.remote_id);
  // No lot that holds something expires (next_expiry_at is kept by the ledger): no lot to read.
  const upcoming = row.next_expiry_at === null ? [] : upcomingExpiries(db, shop.id, row, now);
  const [[b], expiries] = await Promise.all([balancesAt(db, shop.id, [row as Parameters<typeof balancesAt>[2][number]], now), upcoming]);
  const computed = customerComputed(row, b!, shop, tiers);
  return {
    remote_id: remoteId,
    email: row.email,
    first_name: row.first_name,
    points_balance: computed.points_balance,
    credits_balance: computed.credits_balance,
    points_pending: computed.points_pending,
    points_earned_lifetime: computed.points_earned_lifetime,
    vip_tier: computed.vip_tier,
    vip_tier_progress: computed.vip_tier_progress,
    next_expiry: computed.next_expiry,
    upcoming_expiries: expiries,
    referral_code: row.referral_code,
    birthday: row.birthday,
  };
}

type Me = Awaited<ReturnType<typeof meJson>>;

/** A string as JSON writes it; null as null. */
const text = (value: string | null | undefined) => (value === null || value === undefined ? 'null' : JSON.stringify(value));

/**
 * GET /me's answer as sent, `{"data": …}`, written field by field in the schema's order: the
 * schema's serialiser (its nullable unions) and JSON.stringify (a generic walk of every object)
 * each cost more than the rest of the answer. Numbers are written as JSON writes them (finite
 * ones, as every value here is), strings through JSON.stringify; me.test.ts holds the bytes equal
 * to the serialiser's.
 */
export function meBody(me: Me): string {
  const progress = me.vip_tier_progress;
  const next = progress.next_tier;
  const expiry = me.next_expiry;
  const tier = me.vip_tier === null ? 'null' : `{"id":${me.vip_tier.id},"name":${text(me.vip_tier.name)}}`;
  const nextTier =
    next === null ? 'null' : `{"id":${next.id},"name":${text(next.name)},"threshold":${next.threshold},"points_threshold":${next.points_threshold}}`;
  const upcoming = me.upcoming_expiries.map((e) => `{"expires_at":${text(e.expires_at)},"points":${e.points},"credits":${e.credits}}`).join(',');
  return (
    `{"data":{"remote_id":${me.remote_id},"email":${text(me.email)},"first_name":${text(me.first_name)},` +
    `"points_balance":${me.points_balance},"credits_balance":${me.credits_balance},"points_pending":${me.points_pending},` +
    `"points_earned_lifetime":${me.points_earned_lifetime},"vip_tier":${tier},` +
    `"vip_tier_progress":{"metric":${text(progress.metric)},"value":${progress.value},"points_earned":${progress.points_earned},` +
    `"next_tier":${nextTier},"needed":${progress.needed},"points_needed":${progress.points_needed}},` +
    `"next_expiry":${expiry === null ? 'null' : `{"points":${expiry.points},"credits":${expiry.credits},"expires_at":${text(expiry.expires_at)}}`},` +
    `"upcoming_expiries":[${upcoming}],"referral_code":${text(me.referral_code)},"birthday":${text(me.birthday)}}}`
  );
}
