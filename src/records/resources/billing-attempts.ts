import { billingAttemptsCreated } from '../../earning/billing.js';
import { integer, money, oneOf, text, time } from '../fields.js';
import type { Resource } from '../resource.js';
import { CURRENCY } from './orders.js';

export const billingAttempts: Resource = {
  table: 'subscription_billing_attempts',
  path: 'memberships/subscription_billing_attempts',
  scope: 'subscriptions',
  singular: 'subscription billing attempt',
  title: 'SubscriptionBillingAttempt',
  tag: 'Subscriptions',
  plural: 'subscription billing attempts',
  id: 'id',
  write: 'create',
  // A succeeded attempt earns the subscription_billing rule (never under --no-earn).
  effects: {
    async written(trx, w, written) {
      if (w.earn === false) return;
      const created = written
        .filter((r) => r.created)
        .map((r) => ({ id: r.id, status: String(r.values.status), contractRemoteId: Number(r.values.subscription_contract_remote_id) }));
      await billingAttemptsCreated(trx, w.shopId, created, w.now);
    },
  },
  fields: {
    subscription_contract_remote_id: integer("The billed contract's remote_id", 5012345678, 1, Number.MAX_SAFE_INTEGER, {
      required: true,
      references: {
        table: 'subscription_contracts',
        column: 'remote_id',
        code: 'subscription_contract_not_found',
        message: 'No subscription contract of this shop has this remote_id',
      },
    }),
    status: oneOf('Outcome of the attempt', ['succeeded', 'pending', 'failed'], { required: true }),
    amount: money('Amount billed, in currency', 19.9, { required: true, sortable: true }),
    currency: text('ISO 4217 currency code', 'EUR', 3, { ...CURRENCY, required: true }),
    failure_reason: text('Why the attempt failed', 'card_declined', 500, { nullable: true }),
    attempted_at: time('When billing was attempted; now when left out', '2026-01-15T12:00:00.000Z', { default: 'now', sortable: true }),
  },
};
