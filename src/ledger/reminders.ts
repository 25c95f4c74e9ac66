import { DAY_MS, isoTime } from '../clock.js';
import { sql } from 'kysely';
import { lockedRows, transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { findCustomers } from '../customers/repository.js';
import { enqueueEvents, wantsTopics } from '../events/outbox.js';
import { listShops, type Shop } from '../shops/repository.js';
import { creditsToNumber } from './balances.js';
import { customersByTime, type DueCustomer, type TimeCursor } from './expiry-repository.js';

// Expiry reminders (docs/ledger.md, "Expiry reminders"): the webhook points.expiring, sent
// `days_before` days before a customer's expiry, once per customer, expiry instant and
// reminder. Per lot, the expiry is the customer's next one (customers.next_expiry_at); in
// inactivity mode, when their balance falls due. Each reminder walks its index in order from a
// cursor kept per shop and reminder (expiry_reminder_cursors), so a run reads only what became
// due since the last one; a reminder sent is a row of expiry_reminders, whose key makes it
// once only across processes and restarts, written with its outbox deliveries in one transaction.
// Once the expiry it reminds of has passed (and a day more, for a process whose clock lags), no
// run can send it again (dueAfter: only expiries after now): the job prunes it.

/** Customers per transaction. */
export const REMINDERS_PER_TRANSACTION = 100;

const DAYS = (n: number) => n * DAY_MS;

/** What a reminder's cursor walks: per lot, or inactivity with its period and grace (a new one restarts it). */
function basisOf(shop: Shop): string {
  return shop.points_expiry_mode === 'inactivity' ? `inactivity:${shop.points_inactivity_days}:${shop.points_inactivity_since}` : 'per_lot';
}

/** The cursor of one reminder of a shop, locked to commit; a new one starts where nothing is missed. */
async function cursorOf(trx: DB, shop: Shop, daysBefore: number, now: number): Promise<TimeCursor> {
  const basis = basisOf(shop);
  const query = trx.selectFrom('expiry_reminder_cursors').selectAll().where('shop_id', '=', shop.id).where('days_before', '=', daysBefore);
  const row = await lockedRows(trx, query).executeTakeFirst();
  if (row !== undefined && row.basis === basis) return { at: Number(row.after_at), id: Number(row.after_id) };
  // Per lot: expiries after now (those that passed are gone). Inactivity: every customer with a balance not due yet.
  const start = basis === 'per_lot' ? { at: now, id: Number.MAX_SAFE_INTEGER } : { at: Number.MIN_SAFE_INTEGER, id: 0 };
  await trx
    .insertInto('expiry_reminder_cursors')
    .values({ shop_id: shop.id, days_before: daysBefore, basis, after_at: start.at, after_id: start.id })
    .onConflict((oc) => oc.columns(['shop_id', 'days_before']).doUpdateSet({ basis, after_at: start.at, after_id: start.id }))
    .execute();
  return start;
}

/** The customers a reminder finds after the cursor, each with the expiry instant it is for (null: none to remind of). */
async function dueAfter(
  trx: DB,
  shop: Shop,
  daysBefore: number,
  after: TimeCursor,
  now: number,
): Promise<{ found: DueCustomer[]; expiries: (number | null)[] }> {
  if (shop.points_expiry_mode === 'per_lot') {
    const found = await customersByTime(trx, shop.id, 'next_expiry_at', after, now + DAYS(daysBefore), REMINDERS_PER_TRANSACTION);
    return { found, expiries: found.map((c) => (c.at > now ? c.at : null)) };
  }
  const period = DAYS(shop.points_inactivity_days!);
  const since = shop.points_inactivity_since ?? 0;
  if (since + period - DAYS(daysBefore) > now) return { found: [], expiries: [] };
  const found = await customersByTime(trx, shop.id, 'points_active_at', after, now + DAYS(daysBefore) - period, REMINDERS_PER_TRANSACTION);
  return { found, expiries: found.map((c) => Math.max(c.at, since) + period).map((at) => (at > now ? at : null)) };
}

/**
 * Sends one reminder's next batch for a shop, in one transaction: the cursor locked and moved,
 * the reminders claimed by their key, their webhooks in the outbox. Returns the customers read.
 */
export async function remindBatch(trx: DB, shop: Shop, daysBefore: number, now: number): Promise<number> {
  const after = await cursorOf(trx, shop, daysBefore, now);
  const { found, expiries } = await dueAfter(trx, shop, daysBefore, after, now);
  if (found.length === 0) return 0;
  const last = found[found.length - 1]!;
  await trx
    .updateTable('expiry_reminder_cursors')
    .set({ after_at: last.at, after_id: last.id })
    .where('shop_id', '=', shop.id)
    .where('days_before', '=', daysBefore)
    .execute();
  // Nobody listens: the cursor moves on and nothing is kept.
  if (!(await wantsTopics(trx, shop.id, ['points.expiring']))) return found.length;
  const wanted = found.flatMap((c, i) => (expiries[i] !== null && (c.points > 0 || c.credits > 0) ? [{ ...c, expiresAt: expiries[i]! }] : []));
  if (wanted.length === 0) return found.length;
  const claimed = await trx
    .insertInto('expiry_reminders')
    .values(wanted.map((c) => ({ shop_id: shop.id, customer_remote_id: c.id, expires_at: c.expiresAt, days_before: daysBefore, created_at: now })))
    .onConflict((oc) => oc.columns(['shop_id', 'customer_remote_id', 'expires_at', 'days_before']).doNothing())
    .returning(['customer_remote_id', 'expires_at'])
    .execute();
  const mine = new Set(claimed.map((r) => `${r.customer_remote_id}:${r.expires_at}`));
  const sent = wanted.filter((c) => mine.has(`${c.id}:${c.expiresAt}`));
  await enqueueEvents(
    trx,
    shop.id,
    'points.expiring',
    async () => {
      const emails = await findCustomers(
        trx,
        shop.id,
        sent.map((c) => String(c.id)),
      );
      return sent.map((c) => ({
        customer: { remote_id: String(c.id), email: emails.get(String(c.id))?.email ?? null },
        points: c.points,
        credits: creditsToNumber(c.credits),
        expires_at: isoTime(c.expiresAt),
        days_before: daysBefore,
      }));
    },
    now,
  );
  return found.length;
}

/** Sends every reminder that is due in every shop, one bounded transaction at a time. Returns the customers read. */
export async function sendExpiryReminders(db: DB, now: number): Promise<number> {
  let read = 0;
  for (const shop of await listShops(db)) {
    for (const daysBefore of shop.expiry_reminder_days) {
      for (;;) {
        const n = await transaction(db, (trx) => remindBatch(trx, shop, daysBefore, now));
        read += n;
        if (n < REMINDERS_PER_TRANSACTION) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  return read;
}

/** Reminders pruned per statement. */
export const REMINDERS_PRUNED_PER_BATCH = 1_000;

/**
 * Deletes the reminders, of every shop, whose expiry passed over a day before `now`: a bounded
 * batch per statement, oldest first through the expiry_reminders_expires index (migration
 * 022), at most `maxBatches` of them a run. Returns how many were deleted.
 */
export async function pruneExpiryReminders(db: DB, now: number, batch = REMINDERS_PRUNED_PER_BATCH, maxBatches = 100): Promise<number> {
  const before = now - DAY_MS;
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const result = await sql`delete from expiry_reminders where (shop_id, customer_remote_id, expires_at, days_before) in (
      select shop_id, customer_remote_id, expires_at, days_before from expiry_reminders where expires_at < ${before} order by expires_at limit ${batch})`.execute(
      db,
    );
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batch) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}
