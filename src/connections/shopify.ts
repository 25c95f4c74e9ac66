import {
  cents,
  isObject,
  maybeTime,
  remoteIdOf,
  textOf,
  timeOf,
  Unappliable,
  within,
  type CustomerIntent,
  type Intent,
  type Payload,
  type Reading,
} from './intents.js';

// Shopify's webhooks (docs/connections.md, DESIGN 16): the topics that write orders,
// customers and refunds, the privacy topics, and app/uninstalled. Amounts come as decimal
// strings, times with the shop's offset.

const ORDER_TOPICS = new Set(['orders/create', 'orders/updated', 'orders/paid', 'orders/cancelled', 'orders/fulfilled', 'orders/partially_fulfilled']);

/** Shopify's financial statuses that the API knows; partially_paid and any other count as not paid. */
const STATUSES = new Set(['paid', 'pending', 'authorized', 'partially_paid', 'partially_refunded', 'refunded', 'voided']);

export function shopifyCustomer(payload: Payload, what = 'customer'): CustomerIntent {
  return {
    remoteId: remoteIdOf(payload.id, `${what}.id`),
    updatedAt: maybeTime(payload.updated_at, `${what}.updated_at`),
    email: textOf(payload.email),
    first_name: textOf(payload.first_name),
    last_name: textOf(payload.last_name),
    ...(textOf(payload.phone) === null ? {} : { phone: textOf(payload.phone) }),
  };
}

function discountCodes(payload: Payload): string[] {
  const codes = Array.isArray(payload.discount_codes) ? payload.discount_codes : [];
  return [...new Set(codes.map((c) => (isObject(c) ? textOf(c.code) : null)).filter((c): c is string => c !== null))];
}

function shopifyOrder(payload: Payload, reading: Reading): Intent {
  if (payload.test === true && !reading.acceptTestOrders) return { kind: 'ignore', reason: 'a test order (the connection does not accept test orders)' };
  const onTotal = reading.earnOn === 'total';
  const total = cents(onTotal ? payload.total_price : payload.subtotal_price, onTotal ? 'total_price' : 'subtotal_price');
  const current = onTotal ? payload.current_total_price : payload.current_subtotal_price;
  const ownRefunded = current === undefined || current === null ? 0 : within(total - cents(current, 'current price'), total);
  const status = textOf(payload.financial_status);
  const placed = payload.processed_at ?? payload.created_at;
  if (typeof payload.currency !== 'string') throw new Unappliable('the order has no currency');
  return {
    kind: 'order',
    order: {
      remoteId: remoteIdOf(payload.id, 'id'),
      updatedAt: maybeTime(payload.updated_at, 'updated_at'),
      customer: isObject(payload.customer) ? shopifyCustomer(payload.customer, 'customer') : null,
      total,
      ownRefunded,
      currency: payload.currency,
      financial_status: textOf(payload.cancelled_at) !== null ? 'cancelled' : status !== null && STATUSES.has(status) ? status : 'pending',
      discount_codes: discountCodes(payload),
      placed_at: new Date(timeOf(placed, 'processed_at')).toISOString(),
    },
  };
}

function refundAmount(payload: Payload, reading: Reading): number {
  if (reading.earnOn === 'total') {
    const transactions = Array.isArray(payload.transactions) ? payload.transactions.filter(isObject) : [];
    return transactions.filter((t) => t.kind === 'refund' && t.status === 'success').reduce((sum, t) => sum + cents(t.amount, 'transactions[].amount'), 0);
  }
  const lines = Array.isArray(payload.refund_line_items) ? payload.refund_line_items.filter(isObject) : [];
  return lines.reduce((sum, line) => sum + cents(line.subtotal, 'refund_line_items[].subtotal'), 0);
}

/** What a Shopify delivery of `topic` asks for. */
export function shopifyIntent(topic: string, payload: unknown, reading: Reading): Intent {
  if (!isObject(payload)) throw new Unappliable('the body is not a JSON object');
  if (ORDER_TOPICS.has(topic)) return shopifyOrder(payload, reading);
  switch (topic) {
    case 'customers/create':
    case 'customers/update':
      return { kind: 'customer', customer: shopifyCustomer(payload) };
    case 'refunds/create':
      return {
        kind: 'refund',
        refundId: remoteIdOf(payload.id, 'id'),
        orderRemoteId: remoteIdOf(payload.order_id, 'order_id'),
        amount: refundAmount(payload, reading),
      };
    case 'customers/redact':
      if (!isObject(payload.customer)) throw new Unappliable('customers/redact names no customer');
      return { kind: 'redact', customerRemoteId: remoteIdOf(payload.customer.id, 'customer.id') };
    case 'customers/data_request':
      return { kind: 'ignore', reason: 'recorded: answer it with GET /customers/{id}/export' };
    case 'shop/redact':
      return { kind: 'ignore', reason: 'recorded: a shop is erased with `loyalty shops delete`' };
    case 'app/uninstalled':
      return { kind: 'uninstall' };
    default:
      return { kind: 'ignore', reason: `topic ${topic} is not one a connection writes` };
  }
}
