import { sql, type Kysely, type Selectable } from 'kysely';
import type { CustomersTable, DB } from '../db/tables.js';
import { parseCustomerIdentifier, type CustomerIdentifier } from '../core/ids.js';

export { parseCustomerIdentifier, type CustomerIdentifier };
import { pushTo } from '../core/maps.js';
import { lockedRows } from '../db/dialect.js';
import { prepareQuery } from '../db/prepared.js';

export type CustomerRow = Selectable<CustomersTable>;

/** The customer an identifier names; `lock` holds the row until the transaction ends (PostgreSQL). */
/** Whether the shop has a customer with this remote_id. */
export async function customerExists(db: DB, shopId: number, remoteId: number): Promise<boolean> {
  return (
    (await db.selectFrom('customers').select('remote_id').where('shop_id', '=', shopId).where('remote_id', '=', remoteId).executeTakeFirst()) !== undefined
  );
}

export async function findCustomer(db: DB, shopId: number, identifier: string, options: { lock?: boolean } = {}): Promise<CustomerRow | undefined> {
  const parsed = parseCustomerIdentifier(identifier);
  if (parsed === null) return undefined;
  let query = db.selectFrom('customers').selectAll().where('shop_id', '=', shopId);
  query = 'email' in parsed ? query.where(sql`lower(email)`, '=', parsed.email) : query.where('remote_id', '=', parsed.remoteId);
  return (options.lock ? lockedRows(db, query) : query).executeTakeFirst();
}

// Asked for every 500 customers of an import batch: built once per column and count of ids.
const valuesOf = {
  email: customerColumn('email'),
  birthday: customerColumn('birthday'),
};

function customerColumn<C extends 'email' | 'birthday'>(column: C) {
  return prepareQuery<{ shopId: number; ids: readonly number[] }, { remote_id: number } & Record<C, CustomerRow[C]>, number>(
    (db, p, count) =>
      db.selectFrom('customers').select(['remote_id', column]).where('shop_id', '=', p.value('shopId')).where('remote_id', 'in', p.list('ids', count)) as never,
  );
}

/** One column of each of these customers (by remote id), read in chunks of 500; an unknown id is absent. */
export async function customerValues<C extends 'email' | 'birthday'>(
  db: DB,
  shopId: number,
  remoteIds: readonly number[],
  column: C,
): Promise<Map<number, CustomerRow[C]>> {
  const values = new Map<number, CustomerRow[C]>();
  const query = valuesOf[column] as ReturnType<typeof customerColumn<C>>;
  for (let i = 0; i < remoteIds.length; i += 500) {
    const ids = remoteIds.slice(i, i + 500);
    for (const row of await query(db as Kysely<any>, { shopId, ids }, ids.length)) values.set(Number(row.remote_id), row[column]);
  }
  return values;
}

/** The e-mail of each of these customers (by remote id); an unknown id is absent. */
export const emailsOf = (db: DB, shopId: number, remoteIds: readonly number[]) => customerValues(db, shopId, remoteIds, 'email');

/** What a points event needs of its customer (a batch names up to 1000: no more is read). */
export type CustomerKey = Pick<CustomerRow, 'remote_id' | 'email'>;

/**
 * Resolves many identifiers in two queries (one for remote ids, one for e-mails).
 * The map is keyed by the identifier as given.
 */
export async function findCustomers(db: DB, shopId: number, identifiers: readonly string[]): Promise<Map<string, CustomerKey>> {
  const byRemoteId = new Map<number, string[]>();
  const byEmail = new Map<string, string[]>();
  for (const identifier of new Set(identifiers)) {
    const parsed = parseCustomerIdentifier(identifier);
    if (parsed === null) continue;
    if ('email' in parsed) pushTo(byEmail, parsed.email, identifier);
    else pushTo(byRemoteId, parsed.remoteId, identifier);
  }
  const found = new Map<string, CustomerKey>();
  const columns = ['remote_id', 'email'] as const;
  // A batch of the default BATCH_MAX_EVENTS looks its customers up in one query.
  const CHUNK = 1000;
  const remoteIds = [...byRemoteId.keys()];
  for (let i = 0; i < remoteIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('customers')
      .select(columns)
      .where('shop_id', '=', shopId)
      .where('remote_id', 'in', remoteIds.slice(i, i + CHUNK))
      .execute();
    for (const row of rows) for (const identifier of byRemoteId.get(Number(row.remote_id)) ?? []) found.set(identifier, row);
  }
  const emails = [...byEmail.keys()];
  for (let i = 0; i < emails.length; i += CHUNK) {
    const rows = await db
      .selectFrom('customers')
      .select(columns)
      .where('shop_id', '=', shopId)
      .where(sql`lower(email)`, 'in', emails.slice(i, i + CHUNK))
      .execute();
    for (const row of rows) for (const identifier of byEmail.get(row.email!.toLowerCase()) ?? []) found.set(identifier, row);
  }
  return found;
}
