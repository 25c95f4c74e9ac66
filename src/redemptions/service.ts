import { sql } from 'kysely';
import { DAY_MS } from '../clock.js';
import { generateCode } from '../core/codes.js';
import { allocateIds, insertRows, isUniqueViolation, lockedRows, skipLockedSql } from '../db/dialect.js';
import type { DB, RedemptionsTable, RewardCodesTable } from '../db/tables.js';
import { findCustomer } from '../customers/repository.js';
import { AppError, notFound, validationError, type ErrorDetail } from '../errors.js';
import { lockBalances } from '../ledger/balances.js';
import { postWithEffects } from '../earning/effects.js';
import { posting, type Alongside } from '../ledger/posting.js';
import { reverseEvent } from '../ledger/reverse.js';
import { REDEMPTION_SOURCE } from '../ledger/schemas.js';
import { enqueueEvents } from '../events/outbox.js';
import { findRedemption, redemptionJson, type RedemptionRow } from './repository.js';
import type { CodePool, Redemption } from './schemas.js';

// Customers spend points on rewards (docs/ledger.md, "Redemptions"). A redemption is one
// transaction: the reward and the customer are checked, a reward_redemption event consumes
// lots first-expiring first, and a code is issued, from the reward's uploaded pool or
// generated. Voiding gives the points back into the very lots they came from.

interface RewardRow {
  id: number;
  name: string;
  points_price: number;
  enabled: number;
  limit_per_customer: number | null;
  code_prefix: string | null;
  code_valid_days: number | null;
  has_code_pool: number;
}

async function findReward(trx: DB, shopId: number, rewardId: number): Promise<RewardRow | undefined> {
  return trx
    .selectFrom('rewards')
    .select(['id', 'name', 'points_price', 'enabled', 'limit_per_customer', 'code_prefix', 'code_valid_days', 'has_code_pool'])
    .where('shop_id', '=', shopId)
    .where('id', '=', rewardId)
    .executeTakeFirst();
}

/** Whether a code is held anywhere in the shop: in a pool, or issued. */
async function codeTaken(trx: DB, shopId: number, code: string): Promise<boolean> {
  const { rows } = await sql`select 1 from reward_codes where shop_id = ${shopId} and code = ${code}
    union all select 1 from redemptions where shop_id = ${shopId} and code = ${code} limit 1`.execute(trx);
  return rows.length > 0;
}

/**
 * Takes the next unused code of the reward's pool for a redemption, locked until the
 * transaction ends; the caller marks it issued (redemption_id) with the redemption's row.
 * Throws reward_out_of_codes when every code is issued. Racing redemptions on PostgreSQL skip
 * each other's taken codes, and wait only when every unused code is taken by one that may roll
 * back. (Ordered by the index's columns, so that both planners read the pool's index, not the table.)
 */
async function claimPoolCode(trx: DB, shopId: number, rewardId: number): Promise<{ id: number; code: string }> {
  const skipLocked = skipLockedSql(trx);
  const hints = claimHints(trx);
  const key = `${shopId}:${rewardId}`;
  for (;;) {
    // From the last code this process issued for the reward first: on PostgreSQL the index
    // entries of the codes issued before it stay until vacuum, and every claim would step over them.
    const from = hints.get(key) ?? 0;
    const claim = (after: number) =>
      sql<{ id: number; code: string }>`select id, code from reward_codes where shop_id = ${shopId} and reward_id = ${rewardId} and redemption_id is null
        and id >= ${after} order by redemption_id, id limit 1 ${skipLocked}`.execute(trx);
    let { rows } = await claim(from);
    if (rows.length === 0 && from > 0) ({ rows } = await claim(0));
    if (rows.length > 0) {
      hints.set(key, Number(rows[0]!.id));
      return { id: Number(rows[0]!.id), code: rows[0]!.code };
    }
    const pool = trx.selectFrom('reward_codes').select('id').where('shop_id', '=', shopId).where('reward_id', '=', rewardId);
    const claimed = await pool.where('redemption_id', 'is', null).orderBy('redemption_id').orderBy('id').limit(1).executeTakeFirst();
    if (claimed === undefined)
      throw new AppError('reward_out_of_codes', `Reward ${rewardId} has no unused codes left; upload more with POST /rewards/${rewardId}/codes`);
    // Every unused code is taken by a racing redemption: wait for one to end, then look again.
    await lockedRows(trx, pool.where('id', '=', claimed.id)).execute();
  }
}

/** Per database: the last pool code this process issued, by shop and reward (a hint only). */
const hintsByDatabase = new WeakMap<object, Map<string, number>>();
function claimHints(trx: DB): Map<string, number> {
  const adapter = trx.getExecutor().adapter;
  let hints = hintsByDatabase.get(adapter);
  if (hints === undefined) hintsByDatabase.set(adapter, (hints = new Map()));
  return hints;
}

export interface RedeemInput {
  rewardId: number;
  customerIdentifier: string;
}

/** Redeems a reward for a customer in the caller's transaction; returns the redemption. */
export async function redeem(trx: DB, shopId: number, input: RedeemInput, now: number): Promise<Redemption> {
  const reward = await findReward(trx, shopId, input.rewardId);
  const customer = await findCustomer(trx, shopId, input.customerIdentifier);
  const missing: ErrorDetail[] = [];
  if (reward === undefined) missing.push({ param: 'reward_id', code: 'reward_not_found', message: `No reward with id ${input.rewardId}` });
  if (customer === undefined) {
    missing.push({
      param: 'customer_identifier',
      code: 'customer_not_found',
      message: `No customer with remote_id or e-mail ${JSON.stringify(input.customerIdentifier)}`,
    });
  }
  if (reward === undefined || customer === undefined) throw validationError(missing);
  const rewardId = Number(reward.id);
  if (Number(reward.enabled) !== 1) throw new AppError('reward_disabled', `Reward ${rewardId} is disabled: customers cannot redeem it now`);

  const remoteId = Number(customer.remote_id);
  // Under the customer's lock, racing redemptions of one customer count each other (postEvents
  // takes the lock itself when there is no limit to count).
  const locked = reward.limit_per_customer === null ? undefined : await lockBalances(trx, shopId, [remoteId], now);
  if (reward.limit_per_customer !== null) await checkLimit(trx, shopId, rewardId, remoteId, Number(reward.limit_per_customer));
  const pooled = Number(reward.has_code_pool) === 1 ? await claimPoolCode(trx, shopId, rewardId) : null;
  const code = pooled?.code ?? (await freeCode(trx, shopId, reward.code_prefix));

  const price = Number(reward.points_price);
  const spend = posting({ remoteId, email: customer.email }, { source: REDEMPTION_SOURCE, points: -price, externalNote: reward.name, appliedAt: now });
  let row: RedemptionsTable | undefined;
  // The redemption's id is taken with its event's, and its row (and its pool code's mark)
  // written in the event's statement: the shop's lock on redemption ids is held as briefly as a
  // deduction holds the one on event ids (ledger/posting.ts, Alongside).
  const alongside: Alongside = {
    table: 'redemptions',
    rows(id, [eventId]) {
      spend.entry.redemptionId = id;
      spend.entry.internalNote = `Redemption ${id} of reward ${rewardId}`;
      row = redemptionRow(shopId, id, reward, remoteId, code, eventId!, now);
      const mark = pooled === null ? [] : [{ shop_id: shopId, id: pooled.id, redemption_id: id }];
      return [
        { insert: 'redemptions', rows: [row] },
        { update: 'reward_codes', key: ['shop_id', 'id'], rows: mark },
      ];
    },
  };
  const posted = await postWithEffects(trx, shopId, [spend], now, { locked, alongside });
  if (posted.failures.length > 0) {
    const available = posted.balances.get(remoteId)?.points ?? 0;
    throw new AppError('insufficient_balance', `Reward ${rewardId} costs ${price} points; the customer has ${available} available`, {
      details: [{ param: 'reward_id', code: 'insufficient_balance', message: `The customer has ${available} points available; the reward costs ${price}` }],
    });
  }
  const redemption = redemptionJson({ ...row!, email: customer.email });
  await enqueueEvents(trx, shopId, 'redemption.created', [redemption], now);
  return redemption;
}

async function checkLimit(trx: DB, shopId: number, rewardId: number, remoteId: number, limit: number): Promise<void> {
  const { n } = await trx
    .selectFrom('redemptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('shop_id', '=', shopId)
    .where('reward_id', '=', rewardId)
    .where('customer_remote_id', '=', remoteId)
    .executeTakeFirstOrThrow();
  if (Number(n) >= limit) {
    throw new AppError(
      'redemption_limit_reached',
      `The customer has redeemed reward ${rewardId} ${Number(n)} time${Number(n) === 1 ? '' : 's'}, its limit per customer`,
    );
  }
}

/** A generated code that no pool holds and no redemption was issued. */
async function freeCode(trx: DB, shopId: number, prefix: string | null): Promise<string> {
  for (;;) {
    const candidate = generateCode(prefix);
    if (!(await codeTaken(trx, shopId, candidate))) return candidate;
  }
}

function redemptionRow(shopId: number, id: number, reward: RewardRow, remoteId: number, code: string, eventId: number, now: number): RedemptionsTable {
  return {
    shop_id: shopId,
    id,
    reward_id: Number(reward.id),
    reward_name: reward.name,
    customer_remote_id: remoteId,
    points_spent: Number(reward.points_price),
    code,
    status: 'issued',
    expires_at: reward.code_valid_days === null ? null : now + Number(reward.code_valid_days) * DAY_MS,
    points_event_id: eventId,
    void_event_id: null,
    used_at: null,
    voided_at: null,
    order_remote_id: null,
    created_at: now,
    updated_at: now,
  };
}

/** The redemption, locked until the transaction ends; 404 when the shop has none with this id. */
async function lockRedemption(trx: DB, shopId: number, id: number): Promise<RedemptionRow> {
  await lockedRows(trx, trx.selectFrom('redemptions').select('id').where('shop_id', '=', shopId).where('id', '=', id)).execute();
  const row = await findRedemption(trx, shopId, id);
  if (row === undefined) throw notFound('redemption', id);
  return row;
}

/** Marks an issued, unexpired redemption used (the platform consumed its code). */
export async function useRedemption(trx: DB, shopId: number, id: number, now: number): Promise<Redemption> {
  const row = await lockRedemption(trx, shopId, id);
  if (row.status !== 'issued')
    throw new AppError('redemption_not_usable', `Redemption ${row.id} was ${row.status}; only an issued redemption can be marked used`);
  if (row.expires_at !== null && Number(row.expires_at) <= now) {
    throw new AppError('redemption_not_usable', `Redemption ${row.id}'s code expired at ${redemptionJson(row).expires_at}; it cannot be marked used`);
  }
  const changes = { status: 'used' as const, used_at: now, updated_at: now };
  await trx.updateTable('redemptions').set(changes).where('shop_id', '=', shopId).where('id', '=', Number(row.id)).execute();
  return redemptionJson({ ...row, ...changes });
}

/**
 * Voids an issued redemption: a reversal event gives its points back into the very lots they
 * came from. The code is not returned to the pool, and the redemption still counts towards the
 * reward's limit per customer. `byOrder`: the order that used its code was refunded, voided or
 * cancelled (orders.ts), which voids a used redemption too.
 */
export async function voidRedemption(trx: DB, shopId: number, id: number, now: number, options: { byOrder?: boolean } = {}): Promise<Redemption> {
  const row = await lockRedemption(trx, shopId, id);
  const voidable = row.status === 'issued' || (options.byOrder === true && row.status === 'used');
  if (!voidable) throw new AppError('redemption_not_voidable', `Redemption ${row.id} was ${row.status}; only an issued redemption can be voided`);
  // Giving back what a deduction spent changes no points earned: no tier follows.
  const { event: reversal } = await reverseEvent(trx, shopId, Number(row.points_event_id), now, {
    internalNote: `Voids redemption ${row.id} of reward ${row.reward_id}`,
    redemptionId: Number(row.id),
  });
  const changes = { status: 'voided' as const, void_event_id: reversal.id, voided_at: now, updated_at: now };
  await trx.updateTable('redemptions').set(changes).where('shop_id', '=', shopId).where('id', '=', Number(row.id)).execute();
  const redemption = redemptionJson({ ...row, ...changes });
  await enqueueEvents(trx, shopId, 'redemption.voided', [redemption], now);
  return redemption;
}

async function rewardExists(trx: DB, shopId: number, rewardId: number): Promise<number> {
  const found = await trx.selectFrom('rewards').select('id').where('shop_id', '=', shopId).where('id', '=', rewardId).executeTakeFirst();
  if (found === undefined) throw notFound('reward', rewardId);
  return Number(found.id);
}

/** How many of the reward's uploaded codes are left and issued. */
export async function codePool(trx: DB, shopId: number, rewardId: number): Promise<CodePool> {
  const id = await rewardExists(trx, shopId, rewardId);
  const count = (unused: boolean) =>
    trx
      .selectFrom('reward_codes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('shop_id', '=', shopId)
      .where('reward_id', '=', id)
      .where('redemption_id', unused ? 'is' : 'is not', null)
      .executeTakeFirstOrThrow();
  const [available, issued] = await Promise.all([count(true), count(false)]);
  return { reward_id: id, available: Number(available.n), issued: Number(issued.n) };
}

const LOOKUP_CHUNK = 500;

/**
 * Adds codes to a reward's pool, all or nothing: a code given twice, or already held in the
 * shop (in any reward's pool, or issued), refuses the request and lists the clashes.
 */
export async function addCodes(trx: DB, shopId: number, rewardId: number, codes: readonly string[], now: number): Promise<CodePool> {
  const id = await rewardExists(trx, shopId, rewardId);
  const clashes: { index: number; detail: ErrorDetail }[] = [];
  const first = new Map<string, number>();
  codes.forEach((code, index) => {
    const earlier = first.get(code);
    if (earlier === undefined) first.set(code, index);
    else
      clashes.push({
        index,
        detail: { param: `codes[${index}]`, code: 'duplicate', message: `${JSON.stringify(code)} is given twice (also codes[${earlier}])` },
      });
  });
  const unique = [...first.keys()];
  for (let i = 0; i < unique.length; i += LOOKUP_CHUNK) {
    const chunk = unique.slice(i, i + LOOKUP_CHUNK);
    const { rows } = await sql<{ code: string }>`select code from reward_codes where shop_id = ${shopId} and code in (${sql.join(chunk)})
      union select code from redemptions where shop_id = ${shopId} and code in (${sql.join(chunk)})`.execute(trx);
    for (const { code } of rows) {
      const index = first.get(code)!;
      clashes.push({ index, detail: { param: `codes[${index}]`, code: 'code_taken', message: `${JSON.stringify(code)} is already a code of this shop` } });
    }
  }
  if (clashes.length > 0) {
    const details = clashes.sort((a, b) => a.index - b.index).map((c) => c.detail);
    const message = clashes.length === 1 ? details[0]!.message : `${clashes.length} codes are given twice or already held in the shop; none was added`;
    throw new AppError('validation_failed', message, { details });
  }
  await trx.updateTable('rewards').set({ has_code_pool: 1 }).where('shop_id', '=', shopId).where('id', '=', id).execute();
  const ids = await allocateIds(trx, shopId, 'reward_codes', codes.length);
  const rows: RewardCodesTable[] = codes.map((code, i) => ({ shop_id: shopId, id: ids[i]!, reward_id: id, code, redemption_id: null, created_at: now }));
  try {
    await insertRows(trx, 'reward_codes', rows);
  } catch (error) {
    // A racing upload added one of these codes since they were looked up.
    if (isUniqueViolation(error))
      throw validationError([{ param: 'codes', code: 'code_taken', message: 'A racing request added one of these codes; none was added' }], 'code');
    throw error;
  }
  return { ...(await codePool(trx, shopId, id)), added: codes.length };
}
