import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

// Referrals that reward both sides (docs/earning.md, "Referrals"): every customer gets a
// referral code, and a referral keeps the normalised e-mail it compares by, the code it was
// made with, its friend once completed, and when it completed or was cancelled.

const ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

/** A code as the app generates them (frozen here: a migration never changes). */
function code(): string {
  let out = '';
  while (out.length < 12) for (const byte of randomBytes(24)) if (byte < 248 && out.length < 12) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

/** The e-mail as referrals compare it: lower case; for Gmail, without dots and +tags. */
function emailKey(email: string): string {
  const lower = email.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at < 0) return lower;
  let local = lower.slice(0, at);
  let domain = lower.slice(at + 1);
  if (domain === 'googlemail.com') domain = 'gmail.com';
  if (domain === 'gmail.com') local = local.split('+')[0]!.replace(/\./g, '');
  return `${local}@${domain}`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('customers').addColumn('referral_code', 'text').execute();
  await db.schema.createIndex('customers_referral_code').on('customers').columns(['shop_id', 'referral_code']).unique().execute();
  for (;;) {
    const rows = await db.selectFrom('customers').select(['shop_id', 'remote_id']).where('referral_code', 'is', null).limit(1000).execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      await db.updateTable('customers').set({ referral_code: code() }).where('shop_id', '=', row.shop_id).where('remote_id', '=', row.remote_id).execute();
    }
  }

  await db.schema.alterTable('referrals').addColumn('referred_email_key', 'text').execute();
  await db.schema.alterTable('referrals').addColumn('referral_code', 'text').execute();
  for (const column of ['referred_remote_id', 'completed_at', 'cancelled_at']) await db.schema.alterTable('referrals').addColumn(column, 'bigint').execute();
  const referrals = await db.selectFrom('referrals').select(['shop_id', 'id', 'referred_email']).execute();
  for (const row of referrals) {
    await db
      .updateTable('referrals')
      .set({ referred_email_key: emailKey(row.referred_email) })
      .where('shop_id', '=', row.shop_id)
      .where('id', '=', row.id)
      .execute();
  }
  // already_referred and completion find a friend's open referral by the normalised e-mail.
  await db.schema.createIndex('referrals_email_key').on('referrals').columns(['shop_id', 'referred_email_key', 'status']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('referrals_email_key').execute();
  for (const column of ['cancelled_at', 'completed_at', 'referred_remote_id', 'referral_code', 'referred_email_key']) {
    await db.schema.alterTable('referrals').dropColumn(column).execute();
  }
  await db.schema.dropIndex('customers_referral_code').execute();
  await db.schema.alterTable('customers').dropColumn('referral_code').execute();
}
