import type { DB } from '../db/tables.js';
import { postWithEffects } from './effects.js';
import { getShop } from '../shops/repository.js';
import { defaultExpiry, enabledRule, ruleGrant } from './rules.js';

// A succeeded subscription billing attempt earns the subscription_billing rule for the
// contract's customer, once: attempts are created, never changed.

export interface BillingAttemptWrite {
  id: number;
  status: string;
  contractRemoteId: number;
}

export async function billingAttemptsCreated(trx: DB, shopId: number, attempts: readonly BillingAttemptWrite[], now: number): Promise<void> {
  const succeeded = attempts.filter((a) => a.status === 'succeeded');
  if (succeeded.length === 0) return;
  const rule = await enabledRule(trx, shopId, 'subscription_billing');
  if (rule === undefined) return;
  const contracts = await trx
    .selectFrom('subscription_contracts as s')
    .innerJoin('customers as c', (j) => j.onRef('c.shop_id', '=', 's.shop_id').onRef('c.remote_id', '=', 's.customer_remote_id'))
    .select(['s.remote_id', 'c.remote_id as customer', 'c.email'])
    .where('s.shop_id', '=', shopId)
    .where('s.remote_id', 'in', [...new Set(succeeded.map((a) => a.contractRemoteId))])
    .execute();
  const byContract = new Map(contracts.map((c) => [Number(c.remote_id), { remoteId: Number(c.customer), email: c.email }]));
  const shop = (await getShop(trx, shopId))!;
  const postings = succeeded.flatMap((a) => {
    const customer = byContract.get(a.contractRemoteId);
    return customer === undefined ? [] : (ruleGrant(rule, customer, now, defaultExpiry(shop, now), `Subscription billing attempt ${a.id}`) ?? []);
  });
  if (postings.length > 0) await postWithEffects(trx, shopId, postings, now);
}
