import { Type } from 'typebox';
import { serverUrl } from '../../config.js';
import type { ErrorDetail } from '../../errors.js';
import { boolean, oneOf, text } from '../fields.js';
import type { Resource } from '../resource.js';

// A store connection (docs/connections.md): a Shopify or WooCommerce store sends its webhooks
// to the connection's ingest_url, signed with the platform's secret, which is written here and
// never shown back. What a delivery does is src/connections/.

export const PLATFORMS = ['shopify', 'woocommerce'] as const;
export type Platform = (typeof PLATFORMS)[number];

/** Where the platform sends the connection's webhooks: PUBLIC_URL (else HOST and PORT), then /ingest/v1/{platform}/{id}. */
export function ingestUrl(base: string, platform: string, id: number): string {
  return `${base}/ingest/v1/${platform}/${id}`;
}

/** Shopify connections name their shop's domain, WooCommerce ones their store's URL: one each, not the other. */
function placeErrors(record: Record<string, unknown>): ErrorDetail[] {
  const shopify = record.platform === 'shopify';
  const [wanted, other] = shopify ? ['shop_domain', 'store_url'] : ['store_url', 'shop_domain'];
  const errors: ErrorDetail[] = [];
  if (record[wanted] === null || record[wanted] === undefined)
    errors.push({ param: wanted, code: 'missing', message: `a ${String(record.platform)} connection needs ${wanted}` });
  if (record[other] !== null && record[other] !== undefined)
    errors.push({ param: other, code: 'not_allowed', message: `${other} is for ${shopify ? 'WooCommerce' : 'Shopify'} connections; give ${wanted}` });
  return errors;
}

export const connections: Resource = {
  table: 'connections',
  path: 'connections',
  scope: 'connections',
  singular: 'connection',
  title: 'Connection',
  tag: 'Connections',
  plural: 'connections',
  id: 'id',
  write: 'crud',
  description:
    "A Shopify or WooCommerce store that sends its webhooks here: paste `ingest_url` into the platform's webhook settings and give its signing secret. " +
    'Orders and customers are then written exactly as `PUT /orders` and `PUT /customers` write them; every delivery is listed at ' +
    '`GET /connections/{id}/deliveries` (docs/connections.md).',
  fields: {
    platform: oneOf('The commerce platform', PLATFORMS, { required: true }),
    name: text('A name for people', 'My Shopify store', 255, { required: true, sortable: true }),
    shop_domain: text("Shopify: the shop's domain", 'example.myshopify.com', 255, {
      nullable: true,
      pattern: '^[a-z0-9][a-z0-9-]*\\.myshopify\\.com$',
    }),
    store_url: text("WooCommerce: the store's address", 'https://shop.example.com', 2048, { nullable: true, format: 'uri', pattern: '^https?://' }),
    secret: text(
      "The platform's signing secret: a Shopify app's client secret, a WooCommerce webhook's secret. Written, never shown back",
      'shpss_3kTq9VbX2mLw8pZr1a4c',
      255,
      { required: true, writeOnly: true },
    ),
    earn_on: oneOf('What an order earns on: subtotal (after discounts, before shipping and tax) or total', ['subtotal', 'total'], { default: 'subtotal' }),
    accept_test_orders: boolean("Shopify's test orders are written too (else answered `ignored`)", false, { default: false }),
    status: oneOf(
      'active; paused answers deliveries 503 so the platform retries later; uninstalled (app/uninstalled) answers 410',
      ['active', 'paused', 'uninstalled'],
      { default: 'active' },
    ),
  },
  check: { reads: ['platform', 'shop_domain', 'store_url'], rule: placeErrors },
  computed: {
    columns: ['id', 'platform'],
    schema: {
      ingest_url: Type.String({
        format: 'uri',
        description: "The address to paste into the platform's webhook settings",
        examples: ['https://loyalty.example.com/ingest/v1/shopify/42'],
      }),
    },
    async of(_db, _shopId, rows, _now, config) {
      const base = config === undefined ? '' : serverUrl(config);
      return rows.map((row) => ({ ingest_url: ingestUrl(base, String(row.platform), Number(row.id)) }));
    },
  },
};
