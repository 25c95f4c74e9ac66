import type { components } from '@loyalty-api/client';
import type { FieldSpec } from '../../components/record-form';
import type { RecordKind } from '../../components/record-section';
import { webhookHref } from '../../lib/areas';

type Topic = components['schemas']['Webhook']['topic'];

// What the API announces (events/topics.ts on the server), as the webhook's schema types it.
const TOPICS = [
  'points_event.created',
  'points_event.expired',
  'customer.created',
  'customer.updated',
  'customer.redacted',
  'customer.vip_tier_changed',
  'referral.completed',
  'redemption.created',
  'redemption.voided',
] as const satisfies readonly Topic[];

const fields: FieldSpec[] = [
  { name: 'topic', label: 'Topic', kind: 'select', options: TOPICS },
  { name: 'url', label: 'URL', kind: 'text', placeholder: 'https://example.com/hooks/loyalty' },
];

export const webhooks: RecordKind = {
  path: '/merchant_api/v1/webhooks',
  title: 'Webhooks',
  singular: 'webhook',
  empty: 'No webhooks yet: nothing is sent to other systems.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Topic', cell: (r) => String(r.topic) },
    { label: 'URL', cell: (r) => String(r.url) },
    {
      label: 'Deliveries',
      cell: (r) => (
        <a href={webhookHref(r.id)} aria-label={`Deliveries of webhook ${r.id}`}>
          Deliveries
        </a>
      ),
    },
  ],
  fields,
  editFields: fields,
  remove: { verb: 'Delete', consequence: 'Nothing more is sent to its URL, and its deliveries are gone for good.' },
  // The secret is in this answer only: the list never shows it again.
  created: (r) => (
    <>
      <p>Webhook {r.id} created. Its signing secret, shown this once (keep it where the endpoint can verify signatures):</p>
      <code className="secret">{String(r.secret)}</code>
    </>
  ),
};
