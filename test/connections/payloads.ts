import { createHmac, randomUUID } from 'node:crypto';

// Webhook bodies as Shopify and WooCommerce send them: amounts as decimal strings, Shopify's
// times with the shop's offset, WooCommerce's in UTC without one (*_gmt), and the many fields a
// connection does not read. Used by the tests and the benchmark.

export const sign = (body: string | Buffer, secret: string): string => createHmac('sha256', secret).update(body).digest('base64');

const money = (cents: number) => (cents / 100).toFixed(2);

/** A time in New York's winter offset, as a Shopify shop there shows it. */
export const shopifyTime = (ms: number): string => new Date(ms - 5 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '-05:00');

export interface ShopifyCustomerOptions {
  id: number;
  email: string | null;
  firstName?: string;
  updatedAt: number;
}

export function shopifyCustomer(c: ShopifyCustomerOptions): Record<string, unknown> {
  return {
    id: c.id,
    email: c.email,
    created_at: shopifyTime(c.updatedAt - 86_400_000),
    updated_at: shopifyTime(c.updatedAt),
    first_name: c.firstName ?? 'Ada',
    last_name: 'Lovelace',
    state: 'enabled',
    note: null,
    verified_email: true,
    multipass_identifier: null,
    tax_exempt: false,
    phone: null,
    currency: 'EUR',
    tags: 'vip, newsletter',
    admin_graphql_api_id: `gid://shopify/Customer/${c.id}`,
    default_address: {
      id: c.id + 1,
      customer_id: c.id,
      address1: '12 Analytical Row',
      city: 'London',
      country: 'United Kingdom',
      zip: 'N1 9GU',
      default: true,
    },
  };
}

export interface ShopifyOrderOptions {
  id: number;
  customer: ShopifyCustomerOptions | null;
  /** Hundredths, after discounts, before shipping and tax. */
  subtotal: number;
  /** What is still charged after refunds, of the subtotal; defaults to subtotal. */
  currentSubtotal?: number;
  financialStatus?: string;
  updatedAt: number;
  test?: boolean;
  cancelled?: boolean;
  codes?: string[];
  /** Line items (each ~1 KB), for the body's size. */
  lines?: number;
}

function lineItem(orderId: number, i: number): Record<string, unknown> {
  return {
    id: orderId * 1000 + i,
    admin_graphql_api_id: `gid://shopify/LineItem/${orderId * 1000 + i}`,
    fulfillable_quantity: 1,
    fulfillment_service: 'manual',
    fulfillment_status: null,
    gift_card: false,
    grams: 250,
    name: `Organic cotton tee ${i} - Large / Indigo`,
    price: '25.00',
    price_set: { shop_money: { amount: '25.00', currency_code: 'EUR' }, presentment_money: { amount: '25.00', currency_code: 'EUR' } },
    product_exists: true,
    product_id: 7_000_000 + i,
    properties: [{ name: 'Gift wrap', value: 'no' }],
    quantity: 1,
    requires_shipping: true,
    sku: `TEE-IND-L-${i}`,
    taxable: true,
    title: `Organic cotton tee ${i}`,
    total_discount: '0.00',
    variant_id: 40_000_000 + i,
    variant_title: 'Large / Indigo',
    vendor: 'Loyal Threads',
    tax_lines: [{ channel_liable: false, price: '4.17', rate: 0.2, title: 'VAT', price_set: { shop_money: { amount: '4.17', currency_code: 'EUR' } } }],
    discount_allocations: [],
  };
}

export function shopifyOrder(o: ShopifyOrderOptions): Record<string, unknown> {
  const tax = Math.round(o.subtotal * 0.2);
  const shipping = 495;
  const current = o.currentSubtotal ?? o.subtotal;
  return {
    id: o.id,
    admin_graphql_api_id: `gid://shopify/Order/${o.id}`,
    app_id: 580111,
    browser_ip: '203.0.113.7',
    buyer_accepts_marketing: true,
    cancel_reason: o.cancelled ? 'customer' : null,
    cancelled_at: o.cancelled ? shopifyTime(o.updatedAt) : null,
    confirmation_number: `K${o.id}`,
    created_at: shopifyTime(o.updatedAt - 60_000),
    processed_at: shopifyTime(o.updatedAt - 60_000),
    updated_at: shopifyTime(o.updatedAt),
    currency: 'EUR',
    presentment_currency: 'EUR',
    email: o.customer?.email ?? 'guest@example.com',
    financial_status: o.financialStatus ?? 'paid',
    fulfillment_status: null,
    name: `#${o.id % 100000}`,
    order_number: o.id % 100000,
    subtotal_price: money(o.subtotal),
    total_price: money(o.subtotal + tax + shipping),
    total_tax: money(tax),
    current_subtotal_price: money(current),
    current_total_price: money(current + Math.round(current * 0.2) + shipping),
    total_discounts: '0.00',
    total_shipping_price_set: { shop_money: { amount: money(shipping), currency_code: 'EUR' } },
    discount_codes: (o.codes ?? []).map((code) => ({ code, amount: '5.00', type: 'fixed_amount' })),
    test: o.test ?? false,
    tags: '',
    note: null,
    customer: o.customer === null ? null : shopifyCustomer(o.customer),
    line_items: Array.from({ length: o.lines ?? 2 }, (_, i) => lineItem(o.id, i)),
    shipping_address: { first_name: 'Ada', last_name: 'Lovelace', address1: '12 Analytical Row', city: 'London', zip: 'N1 9GU', country_code: 'GB' },
    refunds: [],
  };
}

export function shopifyRefund(r: { id: number; orderId: number; subtotal: number; createdAt: number }): Record<string, unknown> {
  return {
    id: r.id,
    order_id: r.orderId,
    created_at: shopifyTime(r.createdAt),
    note: 'Damaged in transit',
    restock: true,
    refund_line_items: [
      {
        id: r.id + 1,
        line_item_id: r.orderId * 1000,
        quantity: 1,
        restock_type: 'return',
        subtotal: money(r.subtotal),
        total_tax: money(Math.round(r.subtotal * 0.2)),
      },
    ],
    transactions: [
      {
        id: r.id + 2,
        kind: 'refund',
        status: 'success',
        amount: money(r.subtotal + Math.round(r.subtotal * 0.2)),
        currency: 'EUR',
        gateway: 'shopify_payments',
      },
    ],
  };
}

/** The headers Shopify sends with a body. */
export function shopifyHeaders(topic: string, body: string, secret: string, eventId: string = randomUUID()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-shopify-topic': topic,
    'x-shopify-hmac-sha256': sign(body, secret),
    'x-shopify-shop-domain': 'example.myshopify.com',
    'x-shopify-api-version': '2025-01',
    'x-shopify-webhook-id': randomUUID(),
    'x-shopify-event-id': eventId,
    'x-shopify-triggered-at': new Date().toISOString(),
  };
}

const gmt = (ms: number) => new Date(ms).toISOString().slice(0, 19);

export function wooOrder(o: {
  id: number;
  customerId: number;
  email: string;
  total: number;
  status: string;
  modifiedAt: number;
  refunds?: number[];
  coupons?: string[];
}): Record<string, unknown> {
  const tax = Math.round(o.total * 0.1);
  const shipping = 500;
  return {
    id: o.id,
    parent_id: 0,
    status: o.status,
    currency: 'EUR',
    version: '9.4.2',
    prices_include_tax: false,
    date_created: gmt(o.modifiedAt - 60_000),
    date_created_gmt: gmt(o.modifiedAt - 60_000),
    date_modified: gmt(o.modifiedAt),
    date_modified_gmt: gmt(o.modifiedAt),
    discount_total: '0.00',
    shipping_total: money(shipping),
    total: money(o.total + tax + shipping),
    total_tax: money(tax),
    customer_id: o.customerId,
    billing: { first_name: 'Grace', last_name: 'Hopper', email: o.email, city: 'Arlington', country: 'US' },
    payment_method: 'stripe',
    line_items: [{ id: o.id * 10, name: 'Ceramic mug', quantity: 2, subtotal: money(o.total), total: money(o.total), sku: 'MUG-2' }],
    coupon_lines: (o.coupons ?? []).map((code, i) => ({ id: i + 1, code, discount: '0.00' })),
    refunds: (o.refunds ?? []).map((amount, i) => ({ id: o.id * 100 + i, reason: '', total: `-${money(amount)}` })),
  };
}

export function wooHeaders(topic: string, body: string, secret: string): Record<string, string> {
  const [resource, event] = topic.split('.');
  return {
    'content-type': 'application/json',
    'x-wc-webhook-source': 'https://shop.example.com/',
    'x-wc-webhook-topic': topic,
    'x-wc-webhook-resource': resource!,
    'x-wc-webhook-event': event!,
    'x-wc-webhook-signature': sign(body, secret),
    'x-wc-webhook-id': '7',
    'x-wc-webhook-delivery-id': String(Math.floor(Math.random() * 1e9)),
  };
}
