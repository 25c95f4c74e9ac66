import { isoTime } from '../clock.js';
import { allocateIds, insertRows, updateRows } from '../db/dialect.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB, VipTierChangesTable } from '../db/tables.js';
import { enqueueEvents } from '../events/outbox.js';

// VIP tiers (docs/earning.md, "VIP tiers"): a customer's tier is the highest tier of the shop
// whose points_threshold is at most the points they earned (granted, less what reversals and
// refunds took back; pending points not yet). It is recomputed in the transaction of every
// event that changes that sum, and for every customer of the shop after its tiers change
// (jobs.ts); never on a read. A change is written to the customer's tier history and sent as
// customer.vip_tier_changed.

export interface Tier {
  id: number;
  name: string;
  threshold: number;
  /** 1.5 multiplies what the order rule earns by one and a half. */
  multiplier: number;
}

const shopTiers = prepareQuery<{ shopId: number }, { id: number; name: string; points_threshold: number; earning_multiplier: number }>((db, p) =>
  db
    .selectFrom('vip_tiers')
    .select(['id', 'name', 'points_threshold', 'earning_multiplier'])
    .where('shop_id', '=', p.value('shopId'))
    .orderBy('points_threshold'),
);

/** The shop's tiers, lowest threshold first. */
export async function tiersOf(db: DB, shopId: number): Promise<Tier[]> {
  return (await shopTiers(db, { shopId })).map((t) => ({
    id: Number(t.id),
    name: t.name,
    threshold: Number(t.points_threshold),
    multiplier: Number(t.earning_multiplier) / 100,
  }));
}

/** The highest tier whose threshold `earned` reaches; null below every tier. */
export function tierFor(tiers: readonly Tier[], earned: number): Tier | null {
  let found: Tier | null = null;
  for (const tier of tiers) if (tier.threshold <= earned) found = tier;
  return found;
}

export interface TierProgress {
  points_earned: number;
  next_tier: { id: number; name: string; points_threshold: number } | null;
  points_needed: number;
}

/** How far a customer who earned `earned` is from the next tier above the one they hold. */
export function tierProgress(tiers: readonly Tier[], earned: number, currentId: number | null): TierProgress {
  const current = tiers.find((t) => t.id === currentId);
  const next = tiers.find((t) => t.threshold > (current?.threshold ?? -1) && t.threshold > earned) ?? null;
  return {
    points_earned: earned,
    next_tier: next === null ? null : { id: next.id, name: next.name, points_threshold: next.threshold },
    points_needed: next === null ? 0 : Math.max(0, next.threshold - earned),
  };
}

export interface TierSubject {
  remoteId: number;
  email: string | null;
  /** The points earned the tier is judged by. */
  earned: number;
  /** The tier held now. */
  tierId: number | null;
}

/** The customer columns a TierSubject is read from. */
export const TIER_SUBJECT_COLUMNS = ['remote_id', 'email', 'points_earned_window', 'vip_tier_id'] as const;

/** A customer row read with TIER_SUBJECT_COLUMNS, judged by the points earned in the shop's window. */
export function tierSubject(row: { remote_id: number; email: string | null; points_earned_window: number; vip_tier_id?: number | null }): TierSubject {
  return {
    remoteId: Number(row.remote_id),
    email: row.email,
    earned: Number(row.points_earned_window),
    tierId: row.vip_tier_id === null || row.vip_tier_id === undefined ? null : Number(row.vip_tier_id),
  };
}

/**
 * Gives each customer the tier their points earned reach, in the caller's transaction: the
 * changed ones are written, with a history row and a webhook each. `tiers` when already read.
 */
export async function retier(trx: DB, shopId: number, subjects: readonly TierSubject[], now: number, tiers?: readonly Tier[]): Promise<number> {
  if (subjects.length === 0) return 0;
  const all = tiers ?? (await tiersOf(trx, shopId));
  const byId = new Map(all.map((t) => [t.id, t]));
  const changed = subjects.flatMap((s) => {
    const to = tierFor(all, s.earned);
    return (to?.id ?? null) === s.tierId ? [] : [{ subject: s, to }];
  });
  if (changed.length === 0) return 0;
  await updateRows(
    trx,
    'customers',
    ['shop_id', 'remote_id'],
    changed.map(({ subject, to }) => ({ shop_id: shopId, remote_id: subject.remoteId, vip_tier_id: to?.id ?? null, updated_at: now })),
  );
  // A tier deleted since it was reached: its name is the one the customer's last change wrote.
  const goneNames = new Map<number, string | null>();
  for (const { subject } of changed) {
    if (subject.tierId === null || byId.has(subject.tierId)) continue;
    const last = await trx
      .selectFrom('vip_tier_changes')
      .select('to_tier_name')
      .where('shop_id', '=', shopId)
      .where('customer_remote_id', '=', subject.remoteId)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    goneNames.set(subject.remoteId, last?.to_tier_name ?? null);
  }
  const ids = await allocateIds(trx, shopId, 'vip_tier_changes', changed.length);
  const rows: VipTierChangesTable[] = changed.map(({ subject, to }, i) => ({
    shop_id: shopId,
    id: ids[i]!,
    customer_remote_id: subject.remoteId,
    from_tier_id: subject.tierId,
    from_tier_name: subject.tierId === null ? null : (byId.get(subject.tierId)?.name ?? goneNames.get(subject.remoteId) ?? null),
    to_tier_id: to?.id ?? null,
    to_tier_name: to?.name ?? null,
    points_earned: subject.earned,
    created_at: now,
  }));
  await insertRows(trx, 'vip_tier_changes', rows);
  // Built only when the shop has a webhook for the topic.
  const changes = async () =>
    rows.map((row, i) => ({ ...tierChangeJson(row), customer: { remote_id: row.customer_remote_id, email: changed[i]!.subject.email } }));
  await enqueueEvents(trx, shopId, 'customer.vip_tier_changed', changes, now);
  return changed.length;
}

/** The customer's tier changes, unordered (for paginate). */
export function tierChangesQuery(db: DB, shopId: number, customerRemoteId: number) {
  return db.selectFrom('vip_tier_changes').selectAll().where('shop_id', '=', shopId).where('customer_remote_id', '=', customerRemoteId);
}

const tierRef = (id: number | null, name: string | null) => (id === null ? null : { id: Number(id), name });

/** A tier change as the API shows it. */
export function tierChangeJson(row: VipTierChangesTable) {
  return {
    id: Number(row.id),
    from_tier: tierRef(row.from_tier_id, row.from_tier_name),
    to_tier: tierRef(row.to_tier_id, row.to_tier_name),
    points_earned: Number(row.points_earned),
    created_at: isoTime(Number(row.created_at)),
  };
}
