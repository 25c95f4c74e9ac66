import { Type, type Static, type TLiteral } from 'typebox';
import { isoTime } from '../clock.js';
import { WEBHOOK_TOPICS, type WebhookTopic } from '../events/topics.js';
import type { DeliveryStatus } from '../db/tables.js';
import type { AttemptRow, DeliveryRow } from './repository.js';

// The shapes of the webhook delivery endpoints: one schema per shape (type, serialisation, docs).

/** One literal per topic, typed as a tuple: Static of a union over an array is never, over a tuple the topic names. */
const topicLiterals = () => WEBHOOK_TOPICS.map((t) => Type.Literal(t)) as unknown as [TLiteral<WebhookTopic>];

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const satisfies readonly DeliveryStatus[];
const deliveryStatuses = () => DELIVERY_STATUSES.map((s) => Type.Literal(s)) as unknown as [TLiteral<DeliveryStatus>];

/** The deliveries list's filter: one status, or every delivery when absent. */
export const DeliveryFilter = {
  status: Type.Optional(Type.Union(deliveryStatuses(), { description: 'Only the deliveries in this status (failed: those to look at and retry)' })),
};

const time = (description: string) => Type.String({ format: 'date-time', description });
const maybeTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const WebhookEvent = Type.Object(
  {
    id: Type.String({ description: "The event's ID; the same in every delivery of this event (retries included)", examples: ['evt_3kTq9VbX2mLw8pZr1a4c'] }),
    topic: Type.Union(topicLiterals(), { description: 'What happened' }),
    shop_id: Type.Integer({ examples: [1] }),
    created_at: time('When it happened'),
    data: Type.Object({}, { additionalProperties: true, description: 'The record, exactly as the API shows it (a points event, a customer, a referral)' }),
  },
  { $id: 'WebhookEvent', title: 'WebhookEvent', description: "The JSON body POSTed to the webhook's url" },
);

export const WebhookAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, examples: [1] }),
    attempted_at: time('When the request was sent'),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description: "The endpoint's HTTP status; null when no answer came (network error, timeout)",
      examples: [500],
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the attempt failed; null when it succeeded',
      examples: ['the endpoint answered HTTP 500'],
    }),
    duration_ms: Type.Integer({ minimum: 0, examples: [84] }),
  },
  { $id: 'WebhookAttempt', title: 'WebhookAttempt' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.Integer({ description: "The delivery's ID, also sent as the Loyalty-Delivery-Id header", examples: [981] }),
    webhook_id: Type.Integer({ examples: [42] }),
    event_id: Type.String({ examples: ['evt_3kTq9VbX2mLw8pZr1a4c'] }),
    topic: Type.Union(topicLiterals()),
    status: Type.Union(deliveryStatuses(), {
      description: 'pending until the endpoint answers 2xx (delivered) or every retry has failed (failed, after about 3 days)',
    }),
    attempt_count: Type.Integer({ minimum: 0, examples: [2] }),
    next_attempt_at: maybeTime('When the next attempt is due; null once delivered or failed'),
    delivered_at: maybeTime('When the endpoint answered 2xx'),
    payload: WebhookEvent,
    attempts: Type.Array(WebhookAttempt, { description: 'Every attempt so far, oldest first' }),
    created_at: time('When the change happened and the delivery was queued'),
    updated_at: time('When the delivery last changed'),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery', description: 'One event sent to one webhook, with its attempts' },
);

export function deliveryJson(row: DeliveryRow, attempts: readonly AttemptRow[]) {
  return {
    id: Number(row.id),
    webhook_id: Number(row.webhook_id),
    event_id: row.event_id,
    topic: row.topic as WebhookTopic,
    status: row.status,
    attempt_count: Number(row.attempt_count),
    next_attempt_at: row.status === 'pending' ? isoTime(row.next_attempt_at === null ? null : Number(row.next_attempt_at)) : null,
    delivered_at: isoTime(row.delivered_at === null ? null : Number(row.delivered_at)),
    payload: JSON.parse(row.payload) as Static<typeof WebhookEvent>,
    attempts: attempts.map((a) => ({
      attempt: Number(a.attempt),
      attempted_at: isoTime(Number(a.attempted_at)),
      status_code: a.status_code === null ? null : Number(a.status_code),
      error: a.error,
      duration_ms: Number(a.duration_ms),
    })),
    created_at: isoTime(Number(row.created_at)),
    updated_at: isoTime(Number(row.updated_at)),
  };
}
