import { Type, type TLiteral } from 'typebox';
import { isoTime } from '../clock.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './ingest.js';
import type { ConnectionDeliveryRow } from './repository.js';

// The shapes of the deliveries log and of what the ingest endpoints answer.

const literals = <T extends string>(values: readonly T[]) => values.map((s) => Type.Literal(s)) as unknown as [TLiteral<T>];

/** What is kept: every status but duplicate, which is answered and not recorded again. */
const KEPT = DELIVERY_STATUSES.filter((s) => s !== 'duplicate');

export const IngestAnswer = Type.Object(
  {
    status: Type.Union(literals(DELIVERY_STATUSES), {
      description:
        'applied: written; duplicate: this dedupe key was seen, nothing written; stale: an older payload than the one applied; ignored: a topic or ' +
        'order the connection does not write; deferred: a refund kept until its order arrives; failed: a payload that can never apply as sent, kept with its reason (200, so the platform does not retry it)',
    }),
  },
  { $id: 'IngestAnswer', title: 'IngestAnswer' },
);

export const DeliveryFilters = {
  status: Type.Optional(Type.Union(literals(KEPT), { description: 'Only the deliveries in this status (failed: those to look at and replay)' })),
  topic: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Only the deliveries of this topic, as the platform names it', examples: ['orders/paid'] }),
  ),
};

const maybe = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

export const ConnectionDelivery = Type.Object(
  {
    id: Type.Integer({ examples: [981] }),
    connection_id: Type.Integer({ examples: [42] }),
    topic: Type.String({ description: 'As the platform names it', examples: ['orders/paid'] }),
    dedupe_key: Type.String({
      description: "Shopify's X-Shopify-Event-Id; WooCommerce's topic, resource id and date_modified_gmt",
      examples: ['7c2b1f0e-9a41-4b8e-a3f2-5d0c1e2f3a4b'],
    }),
    status: Type.Union(literals(KEPT)),
    error: maybe(Type.String(), 'Why it failed, was stale, ignored or deferred; null when applied'),
    resource: Type.Union([Type.Literal('customer'), Type.Literal('order'), Type.Null()], { description: 'What it wrote (or waits for)' }),
    resource_id: maybe(Type.Integer(), "That record's remote_id"),
    body_bytes: Type.Integer({ minimum: 0, description: 'The size of the body received' }),
    body_kept: Type.Boolean({ description: 'Whether the body is still kept (CONNECTION_RETENTION_DAYS), so that it can be replayed' }),
    received_at: Type.String({ format: 'date-time' }),
    replayed_at: maybe(Type.String({ format: 'date-time' }), 'When it was last replayed'),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'ConnectionDelivery', title: 'ConnectionDelivery', description: 'One webhook a connected store sent, and what it did' },
);

export function deliveryJson(row: ConnectionDeliveryRow & { body_kept?: unknown; body?: string | null }) {
  return {
    id: Number(row.id),
    connection_id: Number(row.connection_id),
    topic: row.topic,
    dedupe_key: row.dedupe_key,
    status: row.status as Exclude<DeliveryStatus, 'duplicate'>,
    error: row.error,
    resource: row.resource as 'customer' | 'order' | null,
    resource_id: row.resource_id === null ? null : Number(row.resource_id),
    body_bytes: Number(row.body_bytes),
    body_kept: row.body_kept === undefined ? row.body !== null && row.body !== undefined : Number(row.body_kept) === 1 || row.body_kept === true,
    received_at: isoTime(Number(row.received_at)),
    replayed_at: row.replayed_at === null ? null : isoTime(Number(row.replayed_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}
