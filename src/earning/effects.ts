import type { DB } from '../db/tables.js';
import { billingAttemptsCreated } from './billing.js';
import { customersWritten } from './customers.js';
import { settleOrders } from './orders.js';

// The seam between record writes and the loyalty programme: the records write service calls
// these in the writer's transaction, before it shows the records, so that a PUT's answer
// already holds what its write earned. The programme never imports the records module.

export interface ProgrammeWriter {
  shopId: number;
  now: number;
  /** False for `loyalty import --no-earn`: records are stored, and earn nothing. */
  earn?: boolean;
}

/**
 * What the programme needs to know of records before they are written: which customers exist
 * already, with their birthdays (other tables need nothing, and read nothing).
 */
export type Prior = Map<number, { birthday: string | null }>;

export async function priorState(trx: DB, shopId: number, table: string, ids: readonly number[]): Promise<Prior> {
  const prior: Prior = new Map();
  if (table !== 'customers' || ids.length === 0) return prior;
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await trx.selectFrom('customers').select(['remote_id', 'birthday']).where('shop_id', '=', shopId).where('remote_id', 'in', ids.slice(i, i + 500)).execute();
    for (const row of rows) prior.set(Number(row.remote_id), { birthday: row.birthday });
  }
  return prior;
}

export interface Written {
  id: number;
  created: boolean;
  /** The record's column values as written. */
  values: Record<string, unknown>;
}

/** A tier was created, changed or deleted: the shop's customers are re-tiered in the background (tiers/jobs.ts). */
export async function tiersChanged(trx: DB, shopId: number): Promise<void> {
  await trx.updateTable('shops').set({ retier_after: 0 }).where('id', '=', shopId).execute();
}

/** Applies the programme to records just deleted. */
export async function recordsRemoved(trx: DB, shopId: number, table: string): Promise<void> {
  if (table === 'vip_tiers') await tiersChanged(trx, shopId);
}

/** Applies the programme to records just written (PUT, POST, PATCH, import, demo). */
export async function recordsWritten(trx: DB, w: ProgrammeWriter, table: string, written: readonly Written[], prior: Prior = new Map()): Promise<void> {
  if (written.length === 0) return;
  switch (table) {
    case 'orders':
      await settleOrders(trx, w.shopId, written.map((r) => r.id), w.now, { earn: w.earn });
      return;
    case 'customers':
      await customersWritten(
        trx,
        w.shopId,
        written.map((r) => ({
          remoteId: r.id,
          created: r.created,
          birthdayBefore: r.created ? undefined : (prior.get(r.id)?.birthday ?? null),
          birthday: (r.values.birthday as string | null | undefined) ?? null,
        })),
        w.now,
        { earn: w.earn },
      );
      return;
    case 'vip_tiers':
      await tiersChanged(trx, w.shopId);
      return;
    case 'subscription_billing_attempts':
      if (w.earn === false) return;
      await billingAttemptsCreated(
        trx,
        w.shopId,
        written.filter((r) => r.created).map((r) => ({ id: r.id, status: String(r.values.status), contractRemoteId: Number(r.values.subscription_contract_remote_id) })),
        w.now,
      );
      return;
  }
}
