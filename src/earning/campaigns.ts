import { sql } from 'kysely';
import { lockedRows } from '../db/dialect.js';
import type { CampaignsTable, DB } from '../db/tables.js';
import { AppError, notFound } from '../errors.js';

// Campaigns (docs/earning.md, "Campaigns"): a multiplier and/or bonus points on what orders earn
// while a campaign runs. A campaign runs from starts_at (inclusive) to ends_at (exclusive), or
// to the instant it was cancelled when that comes first. Which campaign an order earns under is
// decided here (rules.ts, orderEarning); the ledger only links the event to it.

/** A campaign as the earning reads it: numbers as numbers, its end the earlier of ends_at and its cancellation. */
export interface Campaign {
  id: number;
  startsAt: number;
  /** Exclusive: min(ends_at, cancelled_at). */
  endsAt: number;
  /** Hundredths (150: ×1.50); 100 when the campaign gives bonus points only. */
  multiplier: number;
  bonusPoints: number;
  /** VIP tier ids whose members it is for; empty for every customer. */
  tierIds: readonly number[];
}

export type CampaignStatus = 'scheduled' | 'active' | 'ended' | 'cancelled';

type CampaignRow = Pick<CampaignsTable, 'starts_at' | 'ends_at' | 'cancelled_at'>;

/** The exclusive end of the time a campaign runs: ends_at, or its cancellation when earlier. */
export function runsUntil(row: CampaignRow): number {
  const ends = Number(row.ends_at);
  return row.cancelled_at === null || row.cancelled_at === undefined ? ends : Math.min(ends, Number(row.cancelled_at));
}

/** What a campaign is at `now`: cancelled once cancelled, else by its times. */
export function campaignStatus(row: CampaignRow, now: number): CampaignStatus {
  if (row.cancelled_at !== null && row.cancelled_at !== undefined) return 'cancelled';
  if (now < Number(row.starts_at)) return 'scheduled';
  return now < Number(row.ends_at) ? 'active' : 'ended';
}

function toCampaign(row: Pick<CampaignsTable, 'id' | 'starts_at' | 'ends_at' | 'cancelled_at' | 'multiplier' | 'bonus_points' | 'vip_tier_ids'>): Campaign {
  return {
    id: Number(row.id),
    startsAt: Number(row.starts_at),
    endsAt: runsUntil(row),
    multiplier: row.multiplier === null ? 100 : Number(row.multiplier),
    bonusPoints: row.bonus_points === null ? 0 : Number(row.bonus_points),
    tierIds: (JSON.parse(row.vip_tier_ids) as number[]).map(Number),
  };
}

/**
 * The shop's campaigns that run at some instant of [from, to]: one range read of the
 * (shop_id, ends_at) index, whatever the number of orders it serves.
 */
export async function campaignsDuring(db: DB, shopId: number, from: number, to: number): Promise<Campaign[]> {
  const rows = await db
    .selectFrom('campaigns')
    .select(['id', 'starts_at', 'ends_at', 'cancelled_at', 'multiplier', 'bonus_points', 'vip_tier_ids'])
    .where('shop_id', '=', shopId)
    .where('ends_at', '>', from)
    .where('starts_at', '<=', to)
    .where(sql<boolean>`coalesce(cancelled_at, ends_at) > ${from}`)
    .orderBy('id')
    .execute();
  return rows.map(toCampaign).filter((c) => c.startsAt < c.endsAt);
}

/** A campaign as the storefront shows it (GET /storefront_api/v1/programme): what a shopper earns by it, and when. */
export interface ShownCampaign {
  name: string;
  status: 'scheduled' | 'active';
  starts_at: number;
  ends_at: number;
  multiplier: number | null;
  bonus_points: number | null;
  vip_tier_ids: number[];
}

/** The shop's campaigns that run now or will (neither ended nor cancelled), soonest first: one range read of the (shop_id, ends_at) index. */
export async function campaignsAhead(db: DB, shopId: number, now: number): Promise<ShownCampaign[]> {
  const rows = await db
    .selectFrom('campaigns')
    .select(['name', 'starts_at', 'ends_at', 'multiplier', 'bonus_points', 'vip_tier_ids'])
    .where('shop_id', '=', shopId)
    .where('ends_at', '>', now)
    .where('cancelled_at', 'is', null)
    .orderBy('starts_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => ({
    name: row.name,
    status: Number(row.starts_at) <= now ? 'active' : 'scheduled',
    starts_at: Number(row.starts_at),
    ends_at: Number(row.ends_at),
    multiplier: row.multiplier === null ? null : Number(row.multiplier) / 100,
    bonus_points: row.bonus_points === null ? null : Number(row.bonus_points),
    vip_tier_ids: (JSON.parse(row.vip_tier_ids) as number[]).map(Number),
  }));
}

/** The campaigns that apply to an order placed at `placedAt` by a member of tier `tierId` (null: none). */
export function campaignsFor(campaigns: readonly Campaign[], placedAt: number, tierId: number | null): Campaign[] {
  return campaigns.filter((c) => c.startsAt <= placedAt && placedAt < c.endsAt && (c.tierIds.length === 0 || (tierId !== null && c.tierIds.includes(tierId))));
}

/**
 * When a campaign's next announcement falls due: its start (campaign.started) until announced,
 * then its end (campaign.ended); null when both are sent, or when it never runs (cancelled
 * before it started: it announces neither).
 */
export function announceAt(row: CampaignRow & { started_announced: number; ended_announced: number }): number | null {
  const until = runsUntil(row);
  if (Number(row.started_announced) === 0) return Number(row.starts_at) < until ? Number(row.starts_at) : null;
  return Number(row.ended_announced) === 0 ? until : null;
}

/** Sets when the next announcement of these campaigns falls due, after their times or cancellation changed. */
export async function scheduleAnnouncements(trx: DB, shopId: number, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await trx
    .selectFrom('campaigns')
    .select(['id', 'starts_at', 'ends_at', 'cancelled_at', 'started_announced', 'ended_announced'])
    .where('shop_id', '=', shopId)
    .where('id', 'in', ids)
    .execute();
  for (const row of rows) {
    await trx
      .updateTable('campaigns')
      .set({ announce_at: announceAt(row) })
      .where('shop_id', '=', shopId)
      .where('id', '=', Number(row.id))
      .execute();
  }
}

/**
 * POST /campaigns/{id}/cancel: a scheduled or active campaign stops running now (orders placed
 * from now on no longer earn under it); returns its row as stored.
 */
export async function cancelCampaign(trx: DB, shopId: number, id: number, now: number): Promise<Record<string, unknown>> {
  const row = await lockedRows(trx, trx.selectFrom('campaigns').selectAll().where('shop_id', '=', shopId).where('id', '=', id)).executeTakeFirst();
  if (row === undefined) throw notFound('campaign', id);
  const status = campaignStatus(row, now);
  if (status === 'cancelled' || status === 'ended')
    throw new AppError('campaign_not_cancellable', `Campaign ${id} is ${status}; only a scheduled or active campaign can be cancelled`);
  const cancelled = { ...row, cancelled_at: now, updated_at: now };
  await trx
    .updateTable('campaigns')
    .set({ cancelled_at: now, updated_at: now, announce_at: announceAt(cancelled) })
    .where('shop_id', '=', shopId)
    .where('id', '=', id)
    .execute();
  return cancelled;
}

/** VIP tier ids among `ids` that are not tiers of the shop. */
export async function unknownTierIds(db: DB, shopId: number, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const found = await db.selectFrom('vip_tiers').select('id').where('shop_id', '=', shopId).where('id', 'in', ids).execute();
  const known = new Set(found.map((t) => Number(t.id)));
  return ids.filter((id) => !known.has(id));
}
