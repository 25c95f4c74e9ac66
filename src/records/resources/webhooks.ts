import { oneOf, secret, text } from '../fields.js';
import { WEBHOOK_TOPICS } from '../../events/topics.js';
import type { Resource } from '../resource.js';
import { publicUrlErrors } from '../../core/addresses.js';
import { fetchableUrlErrors } from '../../core/fetchable-url.js';

// The topics a webhook subscribes to are what the API announces (events/topics.ts).

export const webhooks: Resource = {
  table: 'webhooks',
  path: 'webhooks',
  scope: 'webhooks',
  singular: 'webhook',
  title: 'Webhook',
  tag: 'Webhooks',
  plural: 'webhooks',
  id: 'id',
  write: 'crud',
  description:
    'Deliveries are POSTed as JSON (`{"id": "evt_…", "topic", "shop_id", "created_at", "data": <the record as the API shows it>}`) ' +
    'and retried with exponential backoff for about 3 days until the endpoint answers 2xx. Each carries `Loyalty-Topic`, ' +
    '`Loyalty-Event-Id`, `Loyalty-Delivery-Id` (the same on every retry: use it to ignore duplicates) and ' +
    '`Loyalty-Signature: t=<unix seconds>,v1=<hex>`. To verify: compute HMAC-SHA256 of `<t>.<raw request body>` keyed with ' +
    "the webhook's secret (the whole `whsec_…` string), compare its hex digest to v1 in constant time, and refuse a t more than " +
    "5 minutes from now. The scheme is Stripe's, so its verification code works with this header name.",
  fields: {
    topic: oneOf('The event that triggers a delivery', WEBHOOK_TOPICS, { required: true, sortable: true }),
    url: text(
      'Where deliveries are POSTed (http or https) on a public host: private, loopback and reserved addresses are refused (`url_not_public`), also after DNS at each delivery',
      'https://example.com/hooks/loyalty',
      2048,
      { required: true, format: 'uri', pattern: '^https?://' },
    ),
    secret: secret('Signs deliveries. Shown only in the response that creates the webhook; store it then', 'whsec_'),
  },
  check: {
    reads: ['url'],
    // A url that could never be delivered to is refused when written, not only at delivery.
    rule: (record, config) => {
      const unfetchable = fetchableUrlErrors(record.url as string);
      return unfetchable.length > 0 || config.webhooks.allowPrivateUrls ? unfetchable : publicUrlErrors(record.url as string);
    },
  },
};
