import { cents, isObject, maybeTime, remoteIdOf, textOf, timeOf, Unappliable, within, type Intent, type Payload, type Reading } from './intents.js';

// WooCommerce's webhooks (docs/connections.md, DESIGN 16): customers and orders, amounts as
// decimal strings, times in UTC without an offset (*_gmt), refunds listed on the order with
// negative totals.

const STATUSES: Readonly<Record<string, string>> = {
  processing: 'paid',
  completed: 'paid',
  pending: 'pending',
  'on-hold': 'pending',
  cancelled: 'cancelled',
  refunded: 'refunded',
  failed: 'voided',
};

function wooOrder(payload: Payload, reading: Reading): Intent {
  const whole = cents(payload.total, 'total');
  const total = reading.earnOn === 'total' ? whole : whole - cents(payload.total_tax, 'total_tax') - cents(payload.shipping_total, 'shipping_total');
  if (total < 0) throw new Unappliable('total less tax and shipping is negative');
  const refunds = Array.isArray(payload.refunds) ? payload.refunds.filter(isObject) : [];
  const refundedWhole = refunds.reduce((sum, r) => sum - cents(r.total, 'refunds[].total'), 0);
  // Refunds are of the whole order: their share of the subtotal, in proportion.
  const refunded = within(whole === 0 || total === whole ? refundedWhole : Math.round((refundedWhole * total) / whole), total);
  let status = STATUSES[String(payload.status)] ?? 'pending';
  if (status === 'paid' && refunded > 0) status = 'partially_refunded';
  const customerId =
    payload.customer_id === 0 || payload.customer_id === '0' || payload.customer_id == null ? null : remoteIdOf(payload.customer_id, 'customer_id');
  const billing = isObject(payload.billing) ? payload.billing : {};
  const coupons = Array.isArray(payload.coupon_lines) ? payload.coupon_lines.filter(isObject) : [];
  if (typeof payload.currency !== 'string') throw new Unappliable('the order has no currency');
  return {
    kind: 'order',
    order: {
      remoteId: remoteIdOf(payload.id, 'id'),
      updatedAt: maybeTime(payload.date_modified_gmt, 'date_modified_gmt', true),
      customer:
        customerId === null
          ? null
          : {
              remoteId: customerId,
              updatedAt: null,
              email: textOf(billing.email),
              first_name: textOf(billing.first_name),
              last_name: textOf(billing.last_name),
              onlyCreate: true,
            },
      total,
      ownRefunded: refunded,
      currency: payload.currency,
      financial_status: status,
      discount_codes: [...new Set(coupons.map((c) => textOf(c.code)).filter((c): c is string => c !== null))],
      placed_at: new Date(timeOf(payload.date_created_gmt, 'date_created_gmt', true)).toISOString(),
    },
  };
}

/** What a WooCommerce delivery of `topic` asks for. */
export function wooIntent(topic: string, payload: unknown, reading: Reading): Intent {
  if (!isObject(payload)) throw new Unappliable('the body is not a JSON object');
  switch (topic) {
    case 'customer.created':
    case 'customer.updated':
      return {
        kind: 'customer',
        customer: {
          remoteId: remoteIdOf(payload.id, 'id'),
          updatedAt: maybeTime(payload.date_modified_gmt, 'date_modified_gmt', true),
          email: textOf(payload.email),
          first_name: textOf(payload.first_name),
          last_name: textOf(payload.last_name),
        },
      };
    case 'order.created':
    case 'order.updated':
      return wooOrder(payload, reading);
    case 'order.deleted':
      return { kind: 'void', orderRemoteId: remoteIdOf(payload.id, 'id') };
    default:
      return { kind: 'ignore', reason: `topic ${topic} is not one a connection writes` };
  }
}

/** WooCommerce sends no event id: the topic, the resource's id and its modification time name a change. */
export function wooDedupeKey(topic: string, payload: unknown): string | null {
  if (!isObject(payload) || payload.id === undefined) return null;
  return `${topic}:${String(payload.id)}:${String(payload.date_modified_gmt ?? '')}`;
}
