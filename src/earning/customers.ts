import { sql, type Kysely } from 'kysely';
import { generateCode, generateCodes } from '../core/codes.js';
import { customerValues, emailsOf } from '../customers/repository.js';
import { updateRows } from '../db/dialect.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB } from '../db/tables.js';
import { getShop } from '../shops/repository.js';
import { tierSubjects } from '../tiers/metric.js';
import { retier, tiersOf } from '../tiers/tiers.js';
import { nextBirthday } from './birthday.js';
import { postWithEffects } from './effects.js';
import { settleOrders } from './orders.js';
import { defaultExpiry, enabledRule, ruleGrant } from './rules.js';

// What a customer write does to the programme (docs/earning.md): a new customer earns the
// signup rule once, and their orders that were paid before they were synced earn now; a
// birthday set or changed schedules the next birthday grant.

export interface CustomerWrite {
  remoteId: number;
  created: boolean;
  /** The birthday before the write (undefined: the customer is new), and after it. */
  birthdayBefore?: string | null;
  birthday: string | null;
  /** A new customer written with a referral code already (an import's upsert: effects.created). */
  coded?: boolean;
  /** A new customer written with its next birthday grant already (an import's upsert: firstBirthdays). */
  scheduled?: boolean;
}

async function retierNew(trx: DB, shopId: number, remoteIds: readonly number[], now: number): Promise<void> {
  const tiers = await tiersOf(trx, shopId);
  if (tiers.length === 0) return;
  await retier(trx, shopId, await tierSubjects(trx, (await getShop(trx, shopId))!, remoteIds, now), now, tiers);
}

// Which of the codes a shop's customers hold: built once per count of codes (db/prepared.ts), as
// an import asks it for every 500 new customers.
const heldCodes = prepareQuery<{ shopId: number; codes: readonly string[] }, { referral_code: string | null }, number>((db, p, count) =>
  db.selectFrom('customers').select('referral_code').where('shop_id', '=', p.value('shopId')).where('referral_code', 'in', p.list('codes', count)),
);

/** `count` referral codes no customer of the shop holds, nor two of them (a clash is drawn again). */
export async function drawReferralCodes(trx: DB, shopId: number, count: number): Promise<string[]> {
  const out: string[] = [];
  const drawn = new Set<string>();
  for (let i = 0; i < count; i += 500) {
    const codes = generateCodes(Math.min(500, count - i));
    for (;;) {
      const taken = await heldCodes(trx as Kysely<any>, { shopId, codes }, codes.length);
      const clashes = new Set(taken.map((row) => row.referral_code));
      const seen = new Set<string>();
      let redrawn = false;
      codes.forEach((code, k) => {
        if (clashes.has(code) || seen.has(code) || drawn.has(code)) {
          codes[k] = generateCode();
          redrawn = true;
        } else seen.add(code);
      });
      if (!redrawn) break;
    }
    for (const code of codes) drawn.add(code);
    out.push(...codes);
  }
  return out;
}

/**
 * `count` referral codes for the new customers of a bulk upsert (import, demo), distinct among
 * themselves but not looked up: the shop's unique index refuses a code a stored customer holds
 * (a chance of about 10^-12 per code beside a million customers), and the importer then writes
 * the batch again with codes drawn anew (records/import.ts). Looking every code up cost an
 * import of 1,000,000 customers 3.3 s of SQLite's CPU: a random read of the index per code.
 */
export function drawBulkReferralCodes(count: number): string[] {
  const codes = generateCodes(count);
  const seen = new Set<string>();
  for (let i = 0; i < codes.length; i++) {
    while (seen.has(codes[i]!)) codes[i] = generateCode();
    seen.add(codes[i]!);
  }
  // Sorted: the batch's rows are inserted in their order, so the unique index then takes the
  // codes in one pass from its first leaf to its last instead of at random (1,000,000 customers
  // in batches of 10,000: 4.7 s less of SQLite's CPU, of 36; the sort, 0.4-1.2 s of ours). Each
  // code is as random as before; only which new customer of the batch gets which one follows
  // the batch's order.
  return codes.sort();
}

/** Gives new customers their referral codes (those an upsert did not already write with them). */
async function assignReferralCodes(trx: DB, shopId: number, remoteIds: readonly number[]): Promise<void> {
  const codes = await drawReferralCodes(trx, shopId, remoteIds.length);
  await updateRows(
    trx,
    'customers',
    ['shop_id', 'remote_id'],
    remoteIds.map((id, k) => ({ shop_id: shopId, remote_id: id, referral_code: codes[k]! })),
  );
}

/** The customers' birthdays before a write, by remote_id (what customersWritten compares with). */
export async function customerBirthdays(trx: DB, shopId: number, ids: readonly number[]): Promise<Map<number, { birthday: string | null }>> {
  const birthdays = await customerValues(trx, shopId, ids, 'birthday');
  return new Map([...birthdays].map(([id, birthday]) => [id, { birthday }]));
}

/** Applies the programme to customers just written, in the writer's transaction. */
export async function customersWritten(
  trx: DB,
  shopId: number,
  writes: readonly CustomerWrite[],
  now: number,
  options: { earn?: boolean } = {},
): Promise<void> {
  if (writes.length === 0) return;
  const created = writes.filter((w) => w.created).map((w) => w.remoteId);
  const uncoded = writes.filter((w) => w.created && !w.coded).map((w) => w.remoteId);
  if (uncoded.length > 0) await assignReferralCodes(trx, shopId, uncoded);
  if (created.length > 0) {
    if (options.earn !== false) await earnOnArrival(trx, shopId, created, now);
    // A new customer holds the tier their points earned reach (a tier from 0 points: at once).
    await retierNew(trx, shopId, created, now);
  }
  await scheduleBirthdays(
    trx,
    shopId,
    writes.filter((w) => !w.scheduled && (w.birthdayBefore ?? null) !== w.birthday),
    now,
  );
}

/** New customers earn the signup rule, and their orders paid before they were synced earn now. */
async function earnOnArrival(trx: DB, shopId: number, created: readonly number[], now: number): Promise<void> {
  const rule = await enabledRule(trx, shopId, 'signup');
  if (rule !== undefined) {
    const shop = (await getShop(trx, shopId))!;
    const emails = await emailsOf(trx, shopId, created);
    const postings = created.flatMap((id) => ruleGrant(rule, { remoteId: id, email: emails.get(id) ?? null }, now, defaultExpiry(shop, now), 'Signup') ?? []);
    if (postings.length > 0) await postWithEffects(trx, shopId, postings, now);
  }
  for (let i = 0; i < created.length; i += 500) {
    const { rows } = await sql<{ remote_id: number }>`select remote_id from orders where shop_id = ${shopId} and earned_at is null
      and customer_remote_id in (${sql.join(created.slice(i, i + 500))})`.execute(trx);
    if (rows.length > 0)
      await settleOrders(
        trx,
        shopId,
        rows.map((r) => Number(r.remote_id)),
        now,
      );
  }
}

/**
 * The next birthday grant of new customers (null: no birthday), as scheduleBirthdays would set
 * it: a bulk upsert writes it in its insert instead of updating every new row after it (an
 * import of 200,000 customers with birthdays spent 0.55 s of SQLite's CPU on that update).
 */
export function firstBirthdays(fresh: readonly Record<string, unknown>[], now: number): (number | null)[] {
  // Many customers share a birthday (a year has 366 of them): each is worked out once (it was
  // 2.8 s of an import of 1,000,000 customers' writing thread, a regular expression and two
  // Dates a row).
  const known = new Map<string, number | null>();
  return fresh.map(({ birthday }) => {
    if (typeof birthday !== 'string') return null;
    let next = known.get(birthday);
    if (next === undefined) known.set(birthday, (next = nextBirthday(birthday, now, null)));
    return next;
  });
}

/**
 * The next birthday grant of customers whose birthday was set or changed: scheduled when set,
 * cleared when removed (a new customer without a birthday has none scheduled: nothing to write).
 */
async function scheduleBirthdays(trx: DB, shopId: number, changed: readonly CustomerWrite[], now: number): Promise<void> {
  if (changed.length === 0) return;
  const granted = await birthdayGrantedYears(
    trx,
    shopId,
    changed.filter((w) => !w.created).map((w) => w.remoteId),
  );
  await updateRows(
    trx,
    'customers',
    ['shop_id', 'remote_id'],
    changed.map((w) => ({
      shop_id: shopId,
      remote_id: w.remoteId,
      birthday_next_at: w.birthday === null ? null : nextBirthday(w.birthday, now, granted.get(w.remoteId) ?? null),
    })),
  );
}

/** The year of each customer's last birthday grant (null: none yet), by remote_id. */
async function birthdayGrantedYears(trx: DB, shopId: number, ids: readonly number[]): Promise<Map<number, number | null>> {
  const granted = new Map<number, number | null>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx
      .selectFrom('customers')
      .select(['remote_id', 'birthday_granted_year'])
      .where('shop_id', '=', shopId)
      .where('remote_id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const row of rows)
      granted.set(
        Number(row.remote_id),
        row.birthday_granted_year === null || row.birthday_granted_year === undefined ? null : Number(row.birthday_granted_year),
      );
  }
  return granted;
}
