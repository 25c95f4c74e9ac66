import { randomInt } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { isoTime } from '../clock.js';
import type { DB } from '../db/tables.js';
import { notFound } from '../errors.js';
import { enqueueEvents } from '../events/outbox.js';
import { emailKey } from '../referrals/email.js';
import { findCustomer, parseCustomerIdentifier } from './repository.js';

// Erasing a person (Shopify's customers/redact; docs/privacy.md): in one transaction, the
// customer's e-mail, names, phone, birthday and referral code are erased, and so are the notes
// written on their points events and their e-mail in the referrals that invited them. The ledger
// stays, exact, under an anonymous customer: a negative remote_id that no request can name (every
// remote_id a request gives is positive), so the old remote_id is free for a new customer and
// nothing written before can be read under it. Copies of the person in stored responses (the
// Idempotency-Key replays) and in webhook payloads are rewritten the same way. A tombstone keeps
// that the remote_id was redacted, and when, so a repeated DELETE answers as the first did.

export interface Redaction {
  remote_id: number;
  redacted: true;
  redacted_at: string;
}

/** The person being erased: what identifies them, and the anonymous remote_id their ledger moves to. */
interface Person {
  remoteId: number;
  anonymousId: number;
  email: string | null;
  emailKey: string | null;
}

/** A negative remote_id no customer of the shop has. */
async function anonymousId(trx: DB, shopId: number): Promise<number> {
  for (;;) {
    const id = -randomInt(1, 2 ** 47);
    const taken = await trx.selectFrom('customers').select('remote_id').where('shop_id', '=', shopId).where('remote_id', '=', id).executeTakeFirst();
    if (taken === undefined) return id;
  }
}

const untyped = (db: DB) => db as unknown as Kysely<any>;

const PERSONAL_FIELDS = ['email', 'first_name', 'last_name', 'phone', 'birthday', 'referral_code'] as const;
const NOTES = ['internal_note', 'external_note'] as const;

/**
 * The person's traces in a JSON document as the API showed it (a customer, points events,
 * orders, referrals, redemptions, tier changes; nested anywhere) rewritten as the tables are:
 * the customer's personal fields null, their remote_id anonymous, their events' notes null, their
 * e-mail nowhere. Returns null when nothing in it concerns the person.
 */
export function scrubbed(text: string, person: Person): string | null {
  let changed = false;
  const isPerson = (value: unknown) => value === person.remoteId;
  const isEmail = (value: unknown) =>
    typeof value === 'string' && person.email !== null && (value.toLowerCase() === person.email || emailKey(value) === person.emailKey);
  const set = (o: Record<string, unknown>, key: string, value: unknown) => {
    if (key in o && o[key] !== value) {
      o[key] = value;
      changed = true;
    }
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(walk);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const o = node as Record<string, unknown>;
    const customer = o.customer as Record<string, unknown> | undefined;
    // A customer as shown, or an event's `customer`.
    if (isPerson(o.remote_id) && 'email' in o) {
      set(o, 'remote_id', person.anonymousId);
      for (const field of PERSONAL_FIELDS) set(o, field, null);
    }
    // A record of theirs: an event (by its `customer`), an order, a redemption, a referral.
    if ((typeof customer === 'object' && customer !== null && isPerson(customer.remote_id)) || isPerson(o.customer_remote_id)) {
      for (const note of NOTES) set(o, note, null);
    }
    for (const key of ['customer_remote_id', 'points_customer_remote_id', 'referred_remote_id']) if (isPerson(o[key])) set(o, key, person.anonymousId);
    if (isPerson(o.referrer_remote_id)) {
      set(o, 'referrer_remote_id', person.anonymousId);
      set(o, 'referral_code', null);
    }
    for (const [key, value] of Object.entries(o)) {
      if (isEmail(value)) set(o, key, key === 'referred_email' ? '' : null);
      else walk(value);
    }
  };
  const document: unknown = JSON.parse(text);
  walk(document);
  return changed ? JSON.stringify(document) : null;
}

/** `column LIKE %text%`, case-insensitive, the text's own wildcards escaped. */
const contains = (column: string, text: string) =>
  sql<boolean>`lower(${sql.ref(column)}) like ${`%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`} escape '\\'`;

/** Whether a stored response shows the person's customer record itself: a PUT /customers/{remote_id}'s. */
function showsPerson(text: string, person: Person): boolean {
  const data = (JSON.parse(text) as { data?: unknown }).data;
  return typeof data === 'object' && data !== null && (data as Record<string, unknown>).remote_id === person.remoteId && 'email' in data;
}

/**
 * What a replay of a PUT that wrote the person answers once they are erased: neither their data
 * nor a create, and the request is not run again (it would write them back). Failures are never
 * stored otherwise; http/idempotency.ts answers this one afresh, as a 404.
 */
const withdrawn = (person: Person) => ({
  status_code: 404,
  response_body: JSON.stringify({
    error: { code: 'not_found', message: `Customer ${person.remoteId} was erased after this request; its response is no longer kept` },
  }),
});

/**
 * The audit log keeps who did what to the person's records, not the values: the changes of the
 * entries about their customer record, or that mention them (a record of theirs shows their
 * remote_id, or their e-mail), are emptied. A remote_id that merely begins with theirs empties
 * an entry too: erasing more than needed is the safe side.
 */
async function scrubAuditLog(trx: DB, shopId: number, person: Person): Promise<void> {
  await trx
    .updateTable('audit_events')
    .set({ changes: '{}' })
    .where('shop_id', '=', shopId)
    .where((eb) =>
      eb.or([
        eb.and([eb('resource', '=', 'customer'), eb('resource_id', '=', String(person.remoteId))]),
        contains('changes', `remote_id":${person.remoteId}`),
        contains('changes', `remote_id":[null,${person.remoteId}`),
        ...(person.email === null ? [] : [contains('changes', person.email)]),
      ]),
    )
    .execute();
}

/**
 * Rewrites the stored JSON of `table.column` that may mention the person; the rest is left
 * alone. A stored response that shows the customer record itself is withdrawn.
 */
async function scrubStored(
  trx: DB,
  shopId: number,
  person: Person,
  table: 'idempotency_keys' | 'webhook_deliveries',
  key: 'key' | 'id',
  column: 'response_body' | 'payload',
): Promise<void> {
  const candidates: { key: string | number; text: string }[] = await untyped(trx)
    .selectFrom(table)
    .select([`${key} as key`, `${column} as text`])
    .where('shop_id', '=', shopId)
    .where((eb) => eb.or([contains(column, `remote_id":${person.remoteId}`), ...(person.email === null ? [] : [contains(column, person.email)])]))
    .execute();
  for (const candidate of candidates) {
    if (table === 'idempotency_keys' && showsPerson(candidate.text, person)) {
      await trx.updateTable('idempotency_keys').set(withdrawn(person)).where('shop_id', '=', shopId).where('key', '=', String(candidate.key)).execute();
      continue;
    }
    const text = scrubbed(candidate.text, person);
    if (text !== null)
      await untyped(trx)
        .updateTable(table)
        .set({ [column]: text })
        .where('shop_id', '=', shopId)
        .where(key, '=', candidate.key)
        .execute();
  }
}

/**
 * DELETE /customers/{customer_identifier}: erases the person in the caller's transaction. A
 * remote_id already redacted answers as it did then; an unknown customer is not_found.
 */
export async function redactCustomer(trx: DB, shopId: number, identifier: string, now: number): Promise<Redaction> {
  const customer = await findCustomer(trx, shopId, identifier, { lock: true });
  if (customer === undefined) {
    const parsed = parseCustomerIdentifier(identifier);
    const earlier =
      parsed !== null && 'remoteId' in parsed
        ? await trx.selectFrom('customer_redactions').selectAll().where('shop_id', '=', shopId).where('remote_id', '=', parsed.remoteId).executeTakeFirst()
        : undefined;
    if (earlier === undefined) throw notFound('customer', identifier);
    return { remote_id: Number(earlier.remote_id), redacted: true, redacted_at: isoTime(Number(earlier.redacted_at)) };
  }

  const remoteId = Number(customer.remote_id);
  const email = customer.email === null ? null : customer.email.toLowerCase();
  const person: Person = { remoteId, anonymousId: await anonymousId(trx, shopId), email, emailKey: email === null ? null : emailKey(email) };
  const anon = person.anonymousId;
  /** Moves the person's rows of `table` to the anonymous customer, with `also` changed too. */
  const rekey = (table: string, column: string, also: Record<string, unknown> = {}) =>
    untyped(trx)
      .updateTable(table)
      .set({ [column]: anon, ...also })
      .where('shop_id', '=', shopId)
      .where(column, '=', remoteId)
      .execute();

  await rekey('customers', 'remote_id', {
    email: null,
    first_name: null,
    last_name: null,
    phone: null,
    birthday: null,
    birthday_next_at: null,
    birthday_granted_year: null,
    referral_code: null,
    updated_at: now,
  });
  await rekey('points_events', 'customer_remote_id', { internal_note: null, external_note: null });
  for (const table of ['points_lots', 'customer_earned_days', 'customer_order_days', 'redemptions', 'vip_tier_changes', 'subscription_contracts', 'orders'])
    await rekey(table, 'customer_remote_id');
  await rekey('orders', 'points_customer_remote_id');
  await rekey('orders', 'counted_customer_remote_id');
  // Their pending referrals, as referrer or as the friend, can no longer complete: paying an
  // anonymous customer, or for a friend who asked to be forgotten, is nobody's intent.
  await trx
    .updateTable('referrals')
    .set({ status: 'cancelled', cancelled_at: now, updated_at: now })
    .where('shop_id', '=', shopId)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('referrer_remote_id', '=', remoteId), ...(person.emailKey === null ? [] : [eb('referred_email_key', '=', person.emailKey)])]))
    .execute();
  await rekey('referrals', 'referrer_remote_id', { referral_code: null });
  await rekey('referrals', 'referred_remote_id');
  // The referrals that invited them, by the e-mail they were invited with.
  if (person.emailKey !== null) {
    await trx
      .updateTable('referrals')
      .set({ referred_email: '', referred_email_key: null })
      .where('shop_id', '=', shopId)
      .where('referred_email_key', '=', person.emailKey)
      .execute();
  }
  await trx
    .updateTable('referrals')
    .set({ referred_email: '', referred_email_key: null })
    .where('shop_id', '=', shopId)
    .where('referred_remote_id', '=', anon)
    .execute();
  await scrubStored(trx, shopId, person, 'idempotency_keys', 'key', 'response_body');
  await scrubStored(trx, shopId, person, 'webhook_deliveries', 'id', 'payload');
  await scrubAuditLog(trx, shopId, person);

  // The anonymous customer is no longer listed (records/repository.ts lists remote_ids above 0).
  await trx
    .updateTable('shop_counts')
    .set({ n: sql`n - 1` })
    .where('shop_id', '=', shopId)
    .where('table_name', '=', 'customers')
    .execute();
  await trx
    .insertInto('customer_redactions')
    .values({ shop_id: shopId, remote_id: remoteId, redacted_at: now })
    .onConflict((oc) => oc.columns(['shop_id', 'remote_id']).doUpdateSet({ redacted_at: now }))
    .execute();
  const redaction: Redaction = { remote_id: remoteId, redacted: true, redacted_at: isoTime(now) };
  await enqueueEvents(trx, shopId, 'customer.redacted', [redaction], now);
  return redaction;
}
