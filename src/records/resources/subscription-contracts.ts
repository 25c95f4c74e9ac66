import { integer, oneOf, time } from '../fields.js';
import type { Resource } from '../resource.js';

export const subscriptionContracts: Resource = {
  table: 'subscription_contracts',
  path: 'subscription_contracts',
  scope: 'subscriptions',
  singular: 'subscription contract',
  title: 'SubscriptionContract',
  tag: 'Subscriptions',
  plural: 'subscription contracts',
  id: 'remote_id',
  write: 'upsert',
  fields: {
    customer_remote_id: integer("The subscribing customer's remote_id", 7012345678, 1, Number.MAX_SAFE_INTEGER, { required: true, customerIdentifier: true }),
    status: oneOf('Contract state', ['active', 'paused', 'cancelled', 'expired', 'failed'], { required: true }),
    // Kept when a contract stops (the last scheduled date), so it can always be sorted on.
    next_billing_date: time('When the contract next bills (or last would have)', '2026-02-01T00:00:00.000Z', { required: true, sortable: true }),
  },
};
