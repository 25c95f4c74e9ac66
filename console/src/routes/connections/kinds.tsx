import { useState } from 'react';
import type { FieldSpec, FormValues } from '../../components/record-form';
import type { RecordKind } from '../../components/record-section';
import { connectionHref } from '../../lib/areas';
import type { Row } from '../../lib/records';

// Store connections (docs/connections.md): a Shopify or WooCommerce store that sends its
// webhooks to the connection's ingest URL, signed with the secret given here (never shown back).

const shopify = (values: FormValues) => values.platform === 'shopify';

const fields: FieldSpec[] = [
  {
    name: 'platform',
    label: 'Platform',
    kind: 'select',
    options: [
      { value: 'shopify', label: 'Shopify' },
      { value: 'woocommerce', label: 'WooCommerce' },
    ],
  },
  { name: 'name', label: 'Name', kind: 'text', placeholder: 'Main store' },
  { name: 'shop_domain', label: 'Shop domain', kind: 'text', placeholder: 'example.myshopify.com', nullable: true, applies: shopify },
  { name: 'store_url', label: 'Store URL', kind: 'text', placeholder: 'https://shop.example.com', nullable: true, applies: (v) => !shopify(v) },
  { name: 'secret', label: 'Signing secret', kind: 'text' },
  {
    name: 'earn_on',
    label: 'Orders earn on',
    kind: 'select',
    options: [
      { value: 'subtotal', label: 'Subtotal (after discounts, before shipping and tax)' },
      { value: 'total', label: 'Total' },
    ],
  },
  { name: 'accept_test_orders', label: 'Accept test orders', kind: 'checkbox' },
];

const editFields: FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  {
    name: 'status',
    label: 'Status',
    kind: 'select',
    options: [
      { value: 'active', label: 'Active' },
      { value: 'paused', label: 'Paused (deliveries answered 503: the store retries later)' },
      { value: 'uninstalled', label: 'Uninstalled' },
    ],
  },
];

/** The ingest URL with a button that copies it. */
function IngestUrl({ row }: { row: Row }) {
  const [copied, setCopied] = useState(false);
  const url = String(row.ingest_url);
  const copy = async () => {
    await navigator.clipboard.writeText(url);
    setCopied(true);
  };
  return (
    <>
      <code>{url}</code>{' '}
      <button type="button" onClick={() => void copy()} aria-label={`${copied ? 'Copied' : 'Copy'} the ingest URL of connection ${row.id}`}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </>
  );
}

export const connections: RecordKind = {
  path: '/merchant_api/v1/connections',
  title: 'Connections',
  singular: 'connection',
  empty: 'No connections yet: add one, then paste its ingest URL into your store’s webhook settings (docs/connections.md).',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Name', cell: (r) => String(r.name) },
    { label: 'Platform', cell: (r) => (r.platform === 'shopify' ? 'Shopify' : 'WooCommerce') },
    { label: 'Status', cell: (r) => String(r.status) },
    { label: 'Ingest URL', cell: (r) => <IngestUrl row={r} /> },
    {
      label: 'Deliveries',
      cell: (r) => (
        <a href={connectionHref(r.id)} aria-label={`Deliveries of connection ${r.id}`}>
          Deliveries
        </a>
      ),
    },
  ],
  fields,
  editFields,
  remove: { verb: 'Delete', consequence: 'Its deliveries are answered 401 from then on, and its delivery log is gone for good.' },
  created: (r) => (
    <p>
      Connection {r.id} created. Paste <code>{String(r.ingest_url)}</code> into the store’s webhook settings.
    </p>
  ),
};
