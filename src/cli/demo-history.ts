import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import { transaction } from '../db/dialect.js';
import { AppError } from '../errors.js';
import { postWithEffects } from '../earning/effects.js';
import { expireLots } from '../ledger/expiry.js';
import { posting } from '../ledger/posting.js';
import { DAY_MS } from '../clock.js';
import { selectRecords } from '../records/repository.js';
import { columnsOf, type Resource, type Row } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';
import { earningRules } from '../records/resources/earning-rules.js';
import { orders } from '../records/resources/orders.js';
import { rewards } from '../records/resources/rewards.js';
import { vipTiers } from '../records/resources/vip-tiers.js';
import { redeem } from '../redemptions/service.js';
import { createMany, upsertMany, type Writer } from '../records/write.js';
import { BONUS, dayTime, HISTORY_DAYS, refunded, REWARDS, RULES, TIERS, type PlannedCustomer } from './demo-plan.js';

// The writing half of `loyalty demo` (demo-plan.ts decides): the programme, then the history day
// by day, each day's customers and orders written at that day's time through the services the
// API writes with (records/write.ts, redemptions/service.ts, the ledger), so the shop's reports,
// tiers and expiries hold that history as they would have lived it.

/** What the programme's part added. */
export interface ProgrammeAdded {
  earning_rules: number;
  rewards: number;
  vip_tiers: number;
}

/**
 * The demo's programme, each part only where the shop has none like it: a signup bonus and a
 * point per euro (unless it has enabled rules of those kinds), tiers whose name and threshold are
 * free, rewards by name.
 */
export async function addProgramme(trx: DB, w: Writer): Promise<ProgrammeAdded> {
  const kinds = new Set((await selectRecords(trx, w.shopId, earningRules).where('enabled', '=', 1).execute()).map((row) => row.kind));
  const newRules = RULES.filter((r) => !kinds.has(r.kind)).map((r) => columnsOf(earningRules, r, 'create', w.now));
  await createMany(trx, w, earningRules, newRules);
  // A tier is added unless its name or threshold is taken (both are unique in a shop).
  const taken = await createMany(
    trx,
    w,
    vipTiers,
    TIERS.map((t) => columnsOf(vipTiers, t, 'create', w.now)),
  );
  const names = new Set((await selectRecords(trx, w.shopId, rewards).execute()).map((row) => row.name));
  const newRewards = REWARDS.filter((r) => !names.has(r.name)).map((r) => columnsOf(rewards, r, 'create', w.now));
  await createMany(trx, w, rewards, newRewards);
  return { earning_rules: newRules.length, rewards: newRewards.length, vip_tiers: TIERS.length - taken.size };
}

/** Upserts rows of a synced resource (customers, orders) as an import would: the shop's webhooks hear of them. */
async function upsertAll(trx: DB, w: Writer, r: Resource, rows: { id: number; values: Row }[]): Promise<void> {
  if (rows.length === 0) return;
  const refused = await upsertMany(trx, w, r, rows);
  if (refused.size > 0) throw new Error(`the demo's own ${r.table} were refused: ${JSON.stringify([...refused.values()][0])}`);
}

/** One day of the history: who joins, then the day's orders (paid orders earn, refunds take back), each at its time. */
async function writeDay(db: DB, config: Config, shopId: number, people: readonly PlannedCustomer[], day: number, now: number): Promise<number> {
  const joining = people.filter((p) => p.day === day);
  const ordering = people.flatMap((p) => p.orders.filter((o) => o.day === day).map((o) => ({ customer: p.remoteId, order: o })));
  if (joining.length === 0 && ordering.length === 0) return 0;
  await transaction(db, async (trx) => {
    const morning: Writer = { shopId, now: dayTime(now, day), config };
    await upsertAll(
      trx,
      morning,
      customers,
      joining.map((p) => ({ id: p.remoteId, values: columnsOf(customers, p.body, 'replace', morning.now) })),
    );
    const afternoon: Writer = { ...morning, now: dayTime(now, day, 6 * 60) };
    const placedAt = new Date(afternoon.now).toISOString();
    const rows = ordering.map(({ customer, order }) => ({
      id: order.remoteId,
      values: columnsOf(
        orders,
        {
          customer_remote_id: customer,
          total: order.total,
          currency: 'EUR',
          financial_status: order.status,
          total_refunded: refunded(order),
          placed_at: placedAt,
        },
        'replace',
        afternoon.now,
      ),
    }));
    await upsertAll(trx, afternoon, orders, rows);
  });
  return ordering.length;
}

/** The spring bonus: points for the customers who take it, expiring a few weeks later. */
async function grantBonus(db: DB, shopId: number, people: readonly PlannedCustomer[], now: number): Promise<void> {
  const given = people.filter((p) => p.bonus && p.day <= BONUS.day);
  if (given.length === 0) return;
  const at = dayTime(now, BONUS.day, 3 * 60);
  const postings = given.map((p) =>
    posting(
      { remoteId: p.remoteId, email: p.body.email },
      { source: 'manual', points: BONUS.points, appliedAt: at, expiresAt: at + BONUS.validDays * DAY_MS, internalNote: BONUS.note },
    ),
  );
  await transaction(db, (trx) => postWithEffects(trx, shopId, postings, at));
}

/** The demo's rewards the shop offers, dearest first. */
async function offeredRewards(db: DB, shopId: number): Promise<Row[]> {
  return (await selectRecords(db, shopId, rewards).where('enabled', '=', 1).execute())
    .filter((r) => REWARDS.some((d) => d.name === r.name))
    .sort((a, b) => Number(b.points_price) - Number(a.points_price));
}

/** After a day's orders, customers who redeem spend on the dearest reward they can afford, at most once a fortnight. */
async function redeemDay(
  db: DB,
  shopId: number,
  offered: readonly Row[],
  people: readonly PlannedCustomer[],
  day: number,
  now: number,
  last: Map<number, number>,
): Promise<number> {
  let redeemed = 0;
  for (const p of people) {
    if (!p.redeems || !p.orders.some((o) => o.day === day) || day - (last.get(p.remoteId) ?? -99) < 14) continue;
    for (const reward of offered) {
      const done = await transaction(db, async (trx) => {
        try {
          await redeem(trx, shopId, { rewardId: Number(reward.id), customerIdentifier: String(p.remoteId) }, dayTime(now, day, 8 * 60));
          return true;
        } catch (error) {
          if (error instanceof AppError && error.code === 'insufficient_balance') return false;
          throw error;
        }
      });
      if (!done) continue;
      last.set(p.remoteId, day);
      redeemed++;
      break;
    }
  }
  return redeemed;
}

/** The new customers' history, day by day up to yesterday; then what expired meanwhile is written off on its day. */
export async function writeHistory(
  db: DB,
  config: Config,
  shopId: number,
  people: readonly PlannedCustomer[],
  now: number,
): Promise<{ orders: number; redemptions: number }> {
  let ordered = 0;
  let redemptions = 0;
  const lastRedeemed = new Map<number, number>();
  const offered = people.length === 0 ? [] : await offeredRewards(db, shopId);
  for (let day = 0; day < HISTORY_DAYS; day++) {
    if (day === BONUS.day) await grantBonus(db, shopId, people, now);
    ordered += await writeDay(db, config, shopId, people, day, now);
    redemptions += await redeemDay(db, shopId, offered, people, day, now, lastRedeemed);
  }
  // Bonus points left unspent expired on their day (the events are dated at the lots' expiry).
  const ids = people.filter((p) => p.bonus && p.day <= BONUS.day).map((p) => p.remoteId);
  for (let i = 0; i < ids.length; i += 200) await transaction(db, (trx) => expireLots(trx, shopId, ids.slice(i, i + 200), now));
  return { orders: ordered, redemptions };
}
