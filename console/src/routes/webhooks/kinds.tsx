import type { components } from '@loyalty-api/client';
import type { FieldSpec } from '../../components/record-form';
import type { RecordKind } from '../../components/record-section';
import { webhookHref } from '../../lib/areas';
import type { Row } from '../../lib/records';

type Topic = components['schemas']['Webhook']['topics'][number];

// What the API announces (events/topics.ts on the server), typed by the webhook's schema: a
// topic the API adds fails the build until it is here.
const TOPICS: Record<Exclude<Topic, '*'>, true> = {
  'points_event.created': true,
  'points_event.expired': true,
  'points.expiring': true,
  'customer.created': true,
  'customer.updated': true,
  'customer.redacted': true,
  'customer.vip_tier_changed': true,
  'referral.completed': true,
  'redemption.created': true,
  'redemption.voided': true,
  'campaign.started': true,
  'campaign.ended': true,
};

const EVERY_TOPIC = '*' satisfies Topic;

const fields: FieldSpec[] = [
  {
    name: 'topics',
    label: 'Topics',
    kind: 'choices',
    all: EVERY_TOPIC,
    options: [{ value: EVERY_TOPIC, label: 'Every topic, present and future' }, ...Object.keys(TOPICS)],
  },
  { name: 'url', label: 'URL', kind: 'text', placeholder: 'https://example.com/hooks/loyalty' },
];

const topicsOf = (r: Row): string => {
  const topics = r.topics as Topic[];
  return topics.includes(EVERY_TOPIC) ? 'Every topic' : topics.join(', ');
};

export const webhooks: RecordKind = {
  path: '/merchant_api/v1/webhooks',
  title: 'Webhooks',
  singular: 'webhook',
  empty: 'No webhooks yet: nothing is sent to other systems.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Topics', cell: topicsOf },
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
