import type { Selectable } from 'kysely';
import { isoTime } from '../clock.js';
import type { CustomersTable, DB } from '../db/tables.js';
import { balancesAt, creditsToNumber } from '../ledger/balances.js';
import type { Shop } from '../shops/repository.js';
import { metricValue } from '../tiers/metric.js';
import { tierProgress, type Tier } from '../tiers/tiers.js';
import { upcomingExpiries } from './expiries.js';

// What /me shows (the `Me` schema, docs/storefront.md): the fields of the merchant API's
// Customer that the shopper sees, worked out as records/resources/customers.ts works them out
// for that record (test/storefront/me.test.ts holds the two equal), and upcoming_expiries. Built
// here from the row, the shop and its tiers the caller already holds, rather than as the whole
// record: the record's computed fields read the shop and its tiers again, and format times
// /me never shows. The properties are written in the schema's order, so that the answer can be
// sent as JSON.stringify writes it (meBody), byte for byte what the schema's serialiser writes.

type CustomerRow = Selectable<CustomersTable>;

/** The customer as /me shows it at `now`, read in the caller's snapshot. */
export async function meJson(db: DB, shop: Shop, tiers: readonly Tier[], row: CustomerRow, now: number) {
  const remoteId = Number(row.remote_id);
  // No lot that holds something expires (next_expiry_at is kept by the ledger): no lot to read.
  const upcoming = row.next_expiry_at === null ? [] : upcomingExpiries(db, shop.id, remoteId, now);
  const [[b], expiries] = await Promise.all([balancesAt(db, shop.id, [row as Parameters<typeof balancesAt>[2][number]], now), upcoming]);
  const heldId = row.vip_tier_id === null || row.vip_tier_id === undefined ? null : Number(row.vip_tier_id);
  const tier = heldId === null ? undefined : tiers.find((t) => t.id === heldId);
  const metric = metricValue(shop, {
    points_earned_window: b!.earnedWindow,
    amount_spent_window: row.amount_spent_window,
    orders_count_window: row.orders_count_window,
  });
  const next = b!.nextExpiry;
  return {
    remote_id: remoteId,
    email: row.email,
    first_name: row.first_name,
    points_balance: b!.points,
    credits_balance: creditsToNumber(b!.credits),
    points_pending: b!.pending,
    points_earned_lifetime: b!.earnedLifetime,
    vip_tier: tier === undefined ? null : { id: tier.id, name: tier.name },
    vip_tier_progress: tierProgress(tiers, shop.vip_tier_metric, metric.value, b!.earnedWindow, tier?.id ?? null),
    next_expiry: next === null ? null : { points: next.points, credits: creditsToNumber(next.credits), expires_at: isoTime(next.at) },
    upcoming_expiries: expiries,
    referral_code: row.referral_code,
    birthday: row.birthday,
  };
}

/** GET /me's answer as sent: `{"data": …}` without the schema's serialiser, which costs more than the rest of the answer. */
export function meBody(me: Awaited<ReturnType<typeof meJson>>): string {
  return JSON.stringify({ data: me });
}
