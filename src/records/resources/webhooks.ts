import { oneOf, secret, text } from '../fields.js';
import type { Resource } from '../resource.js';

export const WEBHOOK_TOPICS = ['points_event.created', 'points_event.expired', 'customer.created', 'customer.updated', 'referral.completed', 'vip_tier.changed'] as const;

export const webhooks: Resource = {
  table: 'webhooks',
  path: 'webhooks',
  singular: 'webhook',
  title: 'Webhook',
  tag: 'Webhooks',
  plural: 'webhooks',
  id: 'id',
  write: 'crud',
  fields: {
    topic: oneOf('The event that triggers a delivery', WEBHOOK_TOPICS, { required: true, sortable: true }),
    url: text('Where deliveries are POSTed (http or https)', 'https://example.com/hooks/loyalty', 2048, { required: true, format: 'uri', pattern: '^https?://' }),
    secret: secret('Signs deliveries. Shown only in the response that creates the webhook; store it then', 'whsec_'),
  },
};
