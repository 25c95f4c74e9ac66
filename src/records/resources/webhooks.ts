import type { ErrorDetail } from '../../errors.js';
import { list, oneOf, secret, text } from '../fields.js';
import { WEBHOOK_TOPICS } from '../../events/topics.js';
import type { Resource } from '../resource.js';
import { publicUrlErrors } from '../../core/addresses.js';
import { fetchableUrlErrors } from '../../core/fetchable-url.js';

// The topics a webhook subscribes to are what the API announces (events/topics.ts), or `*` for
// all of them. `topics` lists them; `topic`, from before a webhook could have several, stays
// accepted and shown: it stands for a list of one, and shows the first of the list.

const ANY = [...WEBHOOK_TOPICS, '*'];

const given = (value: unknown) => value !== null && value !== undefined;

/** The topic and topics a webhook is stored with, each filled from the other when a write gives one. */
function completeTopics(values: Record<string, unknown>): void {
  if (given(values.topics) && !given(values.topic)) values.topic = (JSON.parse(values.topics as string) as string[])[0] ?? null;
  else if (given(values.topic) && !given(values.topics)) values.topics = JSON.stringify([values.topic]);
}

function topicErrors(record: Record<string, unknown>): ErrorDetail[] {
  if (!given(record.topics)) return [{ param: 'topics', code: 'missing', message: 'give topics (or topic): the events that trigger a delivery' }];
  const topics = JSON.parse(record.topics as string) as string[];
  if (topics.length === 0) return [{ param: 'topics', code: 'missing', message: 'topics must name at least one topic, or be ["*"] for all' }];
  if (topics.includes('*') && topics.length > 1) return [{ param: 'topics', code: 'invalid_topics', message: '"*" stands for every topic: give it alone' }];
  if (record.topic !== topics[0])
    return [{ param: 'topic', code: 'conflicting_topics', message: 'topic must be the first of topics when both are given; give one of them' }];
  return [];
}

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
    topics: list(
      'The events that trigger a delivery; ["*"] for every topic, present and future',
      ['points_event.created', 'customer.updated'],
      { values: ANY },
      ANY.length,
    ),
    topic: oneOf('The first of topics. Sent alone, it subscribes the webhook to that one topic (a list of one); "*" for every topic', ANY, { sortable: true }),
    url: text(
      'Where deliveries are POSTed (http or https) on a public host: private, loopback and reserved addresses are refused (`url_not_public`), also after DNS at each delivery',
      'https://example.com/hooks/loyalty',
      2048,
      { required: true, format: 'uri', pattern: '^https?://' },
    ),
    secret: secret('Signs deliveries. Shown only in the response that creates the webhook; store it then', 'whsec_'),
  },
  complete: completeTopics,
  check: [
    { reads: ['topic', 'topics'], rule: topicErrors },
    {
      reads: ['url'],
      // A url that could never be delivered to is refused when written, not only at delivery.
      rule: (record, config) => {
        const unfetchable = fetchableUrlErrors(record.url as string);
        return unfetchable.length > 0 || config.webhooks.allowPrivateUrls ? unfetchable : publicUrlErrors(record.url as string);
      },
    },
  ],
};
