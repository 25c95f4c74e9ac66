import { sql } from 'kysely';
import { emailsOf } from '../customers/repository.js';
import { lockedRows, transactionLock } from '../db/dialect.js';
import { insertRecords, findRecord } from '../records/repository.js';
import type { DB } from '../db/tables.js';
import { enqueueEvents } from '../events/outbox.js';
import { AppError, notFound, validationError } from '../errors.js';
import type { Posting } from '../ledger/posting.js';
import { postWithEffects } from '../earning/effects.js';
import { getShop } from '../shops/repository.js';
import { defaultExpiry, enabledRule, ruleGrant } from '../earning/rules.js';
import { recordsJson, type Row } from '../records/resource.js';
import { referrals } from '../records/resources/referrals.js';
import { emailKey } from './email.js';

// Referrals (docs/earning.md, "Referrals"): a customer refers a friend's e-mail; the friend's
// first paid order (or POST /referrals/{id}/complete) completes it, and the referral earning
// rules reward both sides, once.

export interface ReferralInput {
  referrerRemoteId?: number;
  referralCode?: string;
  referredEmail: string;
}

const shown = async (trx: DB, shopId: number, row: Row, now: number) => (await recordsJson(trx, shopId, referrals, [row], now))[0]!;

/** Creates a pending referral after the checks that keep referrals honest; returns it as shown. */
export async function createReferral(trx: DB, shopId: number, input: ReferralInput, now: number): Promise<Row> {
  let referrer: { remote_id: number; email: string | null } | undefined;
  if (input.referralCode !== undefined) {
    referrer = await trx
      .selectFrom('customers')
      .select(['remote_id', 'email'])
      .where('shop_id', '=', shopId)
      .where('referral_code', '=', input.referralCode.toUpperCase())
      .executeTakeFirst();
    if (referrer === undefined)
      throw validationError([{ param: 'referral_code', code: 'referral_code_not_found', message: 'No customer of this shop has this referral_code' }]);
  } else {
    referrer = await trx
      .selectFrom('customers')
      .select(['remote_id', 'email'])
      .where('shop_id', '=', shopId)
      .where('remote_id', '=', input.referrerRemoteId!)
      .executeTakeFirst();
    if (referrer === undefined)
      throw validationError([{ param: 'referrer_remote_id', code: 'customer_not_found', message: 'No customer of this shop has this remote_id' }]);
  }
  const key = emailKey(input.referredEmail);
  if (referrer.email !== null && emailKey(referrer.email) === key) {
    throw new AppError('self_referral', "The friend's e-mail is the referrer's own; a customer cannot refer themselves", {
      details: [{ param: 'referred_email', code: 'self_referral', message: "referred_email is the referrer's own address" }],
    });
  }
  // Racing referrals of one friend see each other.
  await transactionLock(trx, `referral:${shopId}:${key}`);
  const { rows: paid } = await sql`select 1 from customers c join orders o on o.shop_id = c.shop_id and o.customer_remote_id = c.remote_id
    where c.shop_id = ${shopId} and lower(c.email) = ${input.referredEmail.trim().toLowerCase()} and o.financial_status in ('paid', 'partially_refunded', 'refunded') limit 1`.execute(
    trx,
  );
  if (paid.length > 0) {
    throw new AppError('already_customer', `${input.referredEmail} already has a paid order; only new customers can be referred`, {
      details: [{ param: 'referred_email', code: 'already_customer', message: 'The friend already has a paid order' }],
    });
  }
  const open = await trx
    .selectFrom('referrals')
    .select('id')
    .where('shop_id', '=', shopId)
    .where('referred_email_key', '=', key)
    .where('status', 'in', ['pending', 'completed'])
    .executeTakeFirst();
  if (open !== undefined) {
    throw new AppError(
      'already_referred',
      `${input.referredEmail} already has a pending or completed referral (${Number(open.id)}); a friend is referred once`,
      {
        details: [{ param: 'referred_email', code: 'already_referred', message: 'This e-mail already has a pending or completed referral' }],
      },
    );
  }
  const [id] = await insertRecords(
    trx,
    shopId,
    referrals,
    [
      {
        referrer_remote_id: Number(referrer.remote_id),
        referred_email: input.referredEmail.trim(),
        referred_email_key: key,
        status: 'pending',
        referral_code: input.referralCode?.toUpperCase() ?? null,
        referred_remote_id: null,
        completed_at: null,
        cancelled_at: null,
      },
    ],
    now,
  );
  return shown(trx, shopId, (await findRecord(trx, shopId, referrals, id!))!, now);
}

/** The referral, locked until the transaction ends; 404 when the shop has none with this id. */
async function lockReferral(trx: DB, shopId: number, id: number): Promise<Row> {
  const row = await lockedRows(trx, trx.selectFrom('referrals').selectAll().where('shop_id', '=', shopId).where('id', '=', id)).executeTakeFirst();
  if (row === undefined) throw notFound('referral', id);
  return row as unknown as Row;
}

function notPending(row: Row, verb: string): AppError {
  return new AppError('referral_not_pending', `Referral ${Number(row.id)} is ${String(row.status)}; only a pending referral can be ${verb}`);
}

/**
 * Completes pending referrals: the referral rules reward the referrer and, when they are a
 * customer, the friend; referral.completed is sent. `friends` maps each referral to its friend.
 */
async function complete(
  trx: DB,
  shopId: number,
  rows: readonly Row[],
  friends: ReadonlyMap<number, { remoteId: number; email: string | null } | null>,
  now: number,
): Promise<Row[]> {
  if (rows.length === 0) return [];
  const shop = (await getShop(trx, shopId))!;
  const [toReferrer, toFriend] = [await enabledRule(trx, shopId, 'referral_referrer'), await enabledRule(trx, shopId, 'referral_friend')];
  const referrerEmails = await emailsOf(
    trx,
    shopId,
    rows.map((r) => Number(r.referrer_remote_id)),
  );
  const postings: Posting[] = [];
  const expiresAt = defaultExpiry(shop, now);
  for (const row of rows) {
    const id = Number(row.id);
    const referrer = Number(row.referrer_remote_id);
    if (toReferrer && referrerEmails.has(referrer)) {
      const grant = ruleGrant(
        toReferrer,
        { remoteId: referrer, email: referrerEmails.get(referrer) ?? null },
        now,
        expiresAt,
        `Referral ${id}: referred a friend`,
      );
      if (grant) postings.push(grant);
    }
    const friend = friends.get(id);
    if (toFriend && friend) {
      const grant = ruleGrant(toFriend, friend, now, expiresAt, `Referral ${id}: referred by a friend`);
      if (grant) postings.push(grant);
    }
  }
  if (postings.length > 0) await postWithEffects(trx, shopId, postings, now);
  const done: Row[] = [];
  for (const row of rows) {
    const friend = friends.get(Number(row.id)) ?? null;
    const changes = { status: 'completed', referred_remote_id: friend?.remoteId ?? null, completed_at: now, updated_at: now };
    await trx.updateTable('referrals').set(changes).where('shop_id', '=', shopId).where('id', '=', Number(row.id)).execute();
    done.push(await shown(trx, shopId, { ...row, ...changes }, now));
  }
  await enqueueEvents(trx, shopId, 'referral.completed', done, now);
  return done;
}

/** The customer an e-mail key belongs to, when the shop has one. */
async function customerByKey(trx: DB, shopId: number, email: string): Promise<{ remoteId: number; email: string | null } | null> {
  const row = await trx
    .selectFrom('customers')
    .select(['remote_id', 'email'])
    .where('shop_id', '=', shopId)
    .where(sql`lower(email)`, '=', email.trim().toLowerCase())
    .executeTakeFirst();
  return row === undefined ? null : { remoteId: Number(row.remote_id), email: row.email };
}

/** POST /referrals/{id}/complete: completes a pending referral by hand. */
export async function completeReferral(trx: DB, shopId: number, id: number, now: number): Promise<Row> {
  const row = await lockReferral(trx, shopId, id);
  if (row.status !== 'pending') throw notPending(row, 'completed');
  const friend = await customerByKey(trx, shopId, String(row.referred_email));
  return (await complete(trx, shopId, [row], new Map([[id, friend]]), now))[0]!;
}

/** POST /referrals/{id}/cancel: cancels a pending referral. */
export async function cancelReferral(trx: DB, shopId: number, id: number, now: number): Promise<Row> {
  const row = await lockReferral(trx, shopId, id);
  if (row.status !== 'pending') throw notPending(row, 'cancelled');
  const changes = { status: 'cancelled', cancelled_at: now, updated_at: now };
  await trx.updateTable('referrals').set(changes).where('shop_id', '=', shopId).where('id', '=', id).execute();
  return shown(trx, shopId, { ...row, ...changes }, now);
}

/** Completes the pending referrals of customers whose first paid order just earned. */
export async function completeReferralsOf(
  trx: DB,
  shopId: number,
  customers: readonly { remoteId: number; email: string | null }[],
  now: number,
): Promise<void> {
  const byKey = new Map(customers.filter((c) => c.email !== null).map((c) => [emailKey(c.email!), c]));
  if (byKey.size === 0) return;
  const rows = await lockedRows(
    trx,
    trx
      .selectFrom('referrals')
      .selectAll()
      .where('shop_id', '=', shopId)
      .where('referred_email_key', 'in', [...byKey.keys()])
      .where('status', '=', 'pending')
      .orderBy('id'),
  ).execute();
  const friends = new Map(rows.map((row) => [Number(row.id), byKey.get(String(row.referred_email_key))!]));
  await complete(trx, shopId, rows as unknown as Row[], friends, now);
}
