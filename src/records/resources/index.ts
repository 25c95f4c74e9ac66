import type { Resource } from '../resource.js';
import { billingAttempts } from './billing-attempts.js';
import { campaigns } from './campaigns.js';
import { customers } from './customers.js';
import { earningRules } from './earning-rules.js';
import { orders } from './orders.js';
import { referrals } from './referrals.js';
import { rewards } from './rewards.js';
import { subscriptionContracts } from './subscription-contracts.js';
import { vipTiers } from './vip-tiers.js';
import { webhooks } from './webhooks.js';

/** Every record resource; routes, OpenAPI, import and the shared tests iterate this list. */
export const RESOURCES: readonly Resource[] = [
  customers,
  orders,
  subscriptionContracts,
  billingAttempts,
  rewards,
  vipTiers,
  referrals,
  webhooks,
  earningRules,
  campaigns,
];

export function resourceNamed(table: string): Resource | undefined {
  return RESOURCES.find((r) => r.table === table);
}
