import type { RecordKind } from '../../components/record-section';
import type { FieldSpec } from '../../components/record-form';
import { formatTime } from '../../lib/format';

const fields: FieldSpec[] = [
  { name: 'allowed_origins', label: 'Allowed origins', kind: 'list', placeholder: 'https://shop.example (several: commas or spaces between)' },
];

export const storefrontKeys: RecordKind = {
  path: '/merchant_api/v1/storefront_keys',
  title: 'Storefront keys',
  singular: 'storefront key',
  empty: 'No storefront keys yet: shoppers cannot see their loyalty account from the storefront.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Publishable key', cell: (r) => <code>{String(r.publishable_key)}</code> },
    { label: 'Allowed origins', cell: (r) => (r.allowed_origins as string[]).join(', ') || 'none' },
    { label: 'Created', cell: (r) => formatTime(String(r.created_at)) },
  ],
  fields,
  editFields: fields,
  remove: {
    verb: 'Revoke',
    consequence: 'Storefront pages using this key stop working at once, and the customer tokens it signed are refused. This cannot be undone.',
  },
  // The publishable key is public (the storefront's pages carry it); the secret signs customer tokens on the merchant's server and is in this answer only.
  created: (r) => (
    <>
      <p>Storefront key {r.id} created. Publishable key (public, for the storefront&apos;s pages):</p>
      <code className="secret">{String(r.publishable_key)}</code>
      <p>Secret, shown this once (keep it on your server: it signs customer tokens):</p>
      <code className="secret">{String(r.secret)}</code>
    </>
  ),
};
