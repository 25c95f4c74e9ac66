import { integer, money, oneOf, text, time } from '../fields.js';
import type { Resource } from '../resource.js';

export const CURRENCY = { pattern: '^[A-Z]{3}$' } as const;

export const orders: Resource = {
  table: 'orders',
  path: 'orders',
  singular: 'order',
  title: 'Order',
  tag: 'Orders',
  plural: 'orders',
  id: 'remote_id',
  write: 'upsert',
  fields: {
    // Synced records arrive in any order, so the customer need not have been synced yet.
    customer_remote_id: integer('The ordering customer\'s remote_id; null for a guest checkout', 7012345678, 1, Number.MAX_SAFE_INTEGER, { nullable: true }),
    total: money('Order total, in currency', 59.9, { required: true, sortable: true }),
    currency: text('ISO 4217 currency code', 'EUR', 3, { ...CURRENCY, required: true }),
    financial_status: oneOf('Payment state, as the platform reports it', ['paid', 'pending', 'authorized', 'partially_paid', 'partially_refunded', 'refunded', 'voided'], {
      required: true,
    }),
    placed_at: time('When the customer placed the order', '2026-01-15T12:00:00.000Z', { required: true, sortable: true }),
  },
};
