import type { DB } from '../db/tables.js';

export interface Balance {
  points: number;
  /** Hundredths of a credit. */
  credits: number;
}

export const ZERO_BALANCE: Readonly<Balance> = Object.freeze({ points: 0, credits: 0 });

/**
 * Available balances: what remains in lots that have not expired at `now`. Exact at every
 * instant, whatever the expiry sweep has or has not done yet.
 */
export async function balancesOf(db: DB, shopId: number, remoteIds: readonly number[], now: number): Promise<Map<number, Balance>> {
  const out = new Map<number, Balance>();
  if (remoteIds.length === 0) return out;
  const rows = await db
    .selectFrom('points_lots')
    .select(['customer_remote_id', 'kind', (eb) => eb.fn.sum<number>('remaining').as('total')])
    .where('shop_id', '=', shopId)
    .where('customer_remote_id', 'in', remoteIds as number[])
    .where('remaining', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .groupBy(['customer_remote_id', 'kind'])
    .execute();
  for (const row of rows) {
    const id = Number(row.customer_remote_id);
    let balance = out.get(id);
    if (balance === undefined) out.set(id, (balance = { points: 0, credits: 0 }));
    balance[row.kind] = Number(row.total);
  }
  return out;
}

/** Hundredths to the API's decimal number: 1234 → 12.34. */
export function creditsToNumber(hundredths: number): number {
  return Math.round(Number(hundredths)) / 100;
}
