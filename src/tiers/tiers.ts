import { DAY_MS, isoTime } from '../clock.js';
import { allocateIds, insertRows, updateRows } from '../db/dialect.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB, VipTierChangesTable } from '../db/tables.js';
import { enqueueEvents } from '../events/outbox.js';
import { TOKEN_CACHE_MS } from '../http/auth.js';
import { getShop, shopsGeneration, type Shop, type TierMetric } from '../shops/repository.js';

// VIP tiers (docs/earning.md, "VIP tiers"): a customer's tier is the highest tier of the shop
// whose threshold is at most their value in the shop's metric (metric.ts): the points they
// earned (granted, less what reversals and refunds took back; pending points not yet), the
// amount they spent, or the orders they paid, in the window. It is recomputed in the
// transaction of every write that changes that value, and for every customer of the shop after
// its tiers or metric change (jobs.ts); never on a read. A customer who drops below their tier
// keeps it for the shop's vip_tier_retention_days (vip_tier_retained_until), then the job moves
// them. A change is written to the customer's tier history and sent as customer.vip_tier_changed.

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

let generation = 0;

/** Counts the tier writes this process made (retierShopLater), so that kept tiers drop them at once. */
export function tiersGeneration(): number {
  return generation;
}

/** A tier of the shop was created, changed or deleted in this process. */
export function tiersChanged(): void {
  generation++;
}

interface KeptTiers {
  tiers: readonly Tier[];
  /** When the read that found them began. */
  since: number;
  generation: number;
}

const kept = new Map<number, KeptTiers>();
const KEPT_SHOPS = 10_000;

/**
 * The shop's tiers for a read that shows the shop as the storefront's key cache holds it
 * (storefront/auth.ts, http/auth.ts TOKEN_CACHE_MS): kept as long as that shop is, so a change
 * made in this process shows at once and one made by another process within TOKEN_CACHE_MS.
 * Never for a write: a transaction reads tiersOf.
 */
export function keptTiersOf(db: DB, shopId: number): readonly Tier[] | Promise<readonly Tier[]> {
  const current = tiersGeneration() + shopsGeneration();
  const found = kept.get(shopId);
  if (found !== undefined && found.generation === current && performance.now() - found.since < TOKEN_CACHE_MS) return found.tiers;
  const since = performance.now();
  return tiersOf(db, shopId).then((tiers) => {
    if (kept.size >= KEPT_SHOPS && !kept.has(shopId)) kept.clear();
    // Shared by the requests that follow: frozen so that none can change them for the others.
    const frozen = Object.freeze(tiers.map((t) => Object.freeze(t)));
    kept.set(shopId, { tiers: frozen, since, generation: current });
    return frozen;
  });
}

/** The highest tier whose threshold `value` reaches; null below every tier. */
export function tierFor(tiers: readonly Tier[], value: number): Tier | null {
  let found: Tier | null = null;
  for (const tier of tiers) if (tier.threshold <= value) found = tier;
  return found;
}

export interface TierProgress {
  metric: TierMetric;
  value: number;
  points_earned: number;
  next_tier: { id: number; name: string; threshold: number; points_threshold: number } | null;
  needed: number;
  points_needed: number;
}

/**
 * How far a customer is from the next tier above the one they hold: `value` in the shop's
 * metric (amount_spent in currency units), `pointsEarned` in the window whatever the metric.
 */
export function tierProgress(tiers: readonly Tier[], metric: TierMetric, value: number, pointsEarned: number, currentId: number | null): TierProgress {
  const current = tiers.find((t) => t.id === currentId);
  const next = tiers.find((t) => t.threshold > (current?.threshold ?? -1) && t.threshold > value) ?? null;
  const needed = next === null ? 0 : Math.max(0, Math.round((next.threshold - value) * 100) / 100);
  return {
    metric,
    value,
    points_earned: pointsEarned,
    next_tier: next === null ? null : { id: next.id, name: next.name, threshold: next.threshold, points_threshold: next.threshold },
    needed,
    points_needed: needed,
  };
}

export interface TierSubject {
  remoteId: number;
  email: string | null;
  /** The value in the shop's metric the tier is judged by (amount_spent in currency units). */
  value: number;
  /** The same as stored in the tier history (amount_spent in hundredths). */
  stored: number;
  /** The tier held now. */
  tierId: number | null;
  /** Until when a dropped tier is kept; undefined when not read (retier reads it if it matters). */
  retainedUntil?: number | null;
}

/** What retier decides for one customer: a new tier, or only a new retained_until. */
interface Decision {
  subject: TierSubject;
  to: Tier | null;
  retainedUntil: number | null;
}

/** Reads the retained_until of the subjects that did not bring it. */
async function readRetained(trx: DB, shopId: number, subjects: readonly TierSubject[]): Promise<void> {
  const unknown = subjects.filter((s) => s.retainedUntil === undefined);
  for (let i = 0; i < unknown.length; i += 500) {
    const chunk = unknown.slice(i, i + 500);
    const rows = await trx
      .selectFrom('customers')
      .select(['remote_id', 'vip_tier_retained_until'])
      .where('shop_id', '=', shopId)
      .where(
        'remote_id',
        'in',
        chunk.map((s) => s.remoteId),
      )
      .execute();
    const found = new Map(rows.map((r) => [Number(r.remote_id), r.vip_tier_retained_until === null ? null : Number(r.vip_tier_retained_until)]));
    for (const s of chunk) s.retainedUntil = found.get(s.remoteId) ?? null;
  }
}

/**
 * The tier each subject should hold now: the one its value reaches, unless it drops below the
 * tier held, which is kept until retained_until (set to now + the shop's retention on the drop).
 */
function decide(all: readonly Tier[], shop: Shop, subject: TierSubject, now: number): Decision | null {
  const reach = tierFor(all, subject.value);
  const held = all.find((t) => t.id === subject.tierId);
  const retained = subject.retainedUntil ?? null;
  const drops = held !== undefined && (reach === null || reach.threshold < held.threshold);
  if (drops && retained !== null && retained > now) return null;
  if (drops && retained === null && shop.vip_tier_retention_days !== null)
    return { subject, to: held, retainedUntil: now + shop.vip_tier_retention_days * DAY_MS };
  if ((reach?.id ?? null) === subject.tierId && retained === null) return null;
  return { subject, to: reach, retainedUntil: null };
}

/**
 * Gives each customer the tier their value reaches, in the caller's transaction: the changed
 * ones are written, with a history row and a webhook each. `tiers` when already read.
 */
export async function retier(trx: DB, shopId: number, subjects: readonly TierSubject[], now: number, tiers?: readonly Tier[]): Promise<number> {
  if (subjects.length === 0) return 0;
  const all = tiers ?? (await tiersOf(trx, shopId));
  const shop = (await getShop(trx, shopId))!;
  // A drop may be retained, and a customer back at their tier no longer is: both need retained_until.
  const dropping = subjects.filter((s) => {
    const held = all.find((t) => t.id === s.tierId);
    return held !== undefined && held.threshold > s.value;
  });
  await readRetained(trx, shopId, shop.vip_tier_retention_days === null ? dropping : subjects);
  const decisions = subjects.flatMap((s) => decide(all, shop, s, now) ?? []);
  if (decisions.length === 0) return 0;
  await updateRows(
    trx,
    'customers',
    ['shop_id', 'remote_id'],
    decisions.map(({ subject, to, retainedUntil }) => ({
      shop_id: shopId,
      remote_id: subject.remoteId,
      vip_tier_id: to?.id ?? null,
      vip_tier_retained_until: retainedUntil,
      updated_at: now,
    })),
  );
  const changed = decisions.filter((d) => (d.to?.id ?? null) !== d.subject.tierId);
  if (changed.length > 0) await writeChanges(trx, shop, all, changed, now);
  return changed.length;
}

/** The history rows and webhooks of tier changes. */
async function writeChanges(trx: DB, shop: Shop, all: readonly Tier[], changed: readonly Decision[], now: number): Promise<void> {
  const shopId = shop.id;
  const byId = new Map(all.map((t) => [t.id, t]));
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
    points_earned: subject.stored,
    metric: shop.vip_tier_metric,
    created_at: now,
  }));
  await insertRows(trx, 'vip_tier_changes', rows);
  // Built only when the shop has a webhook for the topic.
  const changes = async () =>
    rows.map((row, i) => ({ ...tierChangeJson(row), customer: { remote_id: row.customer_remote_id, email: changed[i]!.subject.email } }));
  await enqueueEvents(trx, shopId, 'customer.vip_tier_changed', changes, now);
}

/** The customer's tier changes, unordered (for paginate). */
export function tierChangesQuery(db: DB, shopId: number, customerRemoteId: number) {
  return db.selectFrom('vip_tier_changes').selectAll().where('shop_id', '=', shopId).where('customer_remote_id', '=', customerRemoteId);
}

const tierRef = (id: number | null, name: string | null) => (id === null ? null : { id: Number(id), name });

/** A tier change as the API shows it. */
export function tierChangeJson(row: VipTierChangesTable) {
  const metric = (row.metric ?? 'points_earned') as TierMetric;
  const stored = Number(row.points_earned);
  return {
    id: Number(row.id),
    from_tier: tierRef(row.from_tier_id, row.from_tier_name),
    to_tier: tierRef(row.to_tier_id, row.to_tier_name),
    metric,
    value: metric === 'amount_spent' ? stored / 100 : stored,
    points_earned: metric === 'points_earned' ? stored : 0,
    created_at: isoTime(Number(row.created_at)),
  };
}
