import { randomBytes } from 'node:crypto';
import { isoTime } from '../clock.js';
import { allocateIdsOf, insertRows } from '../db/dialect.js';
import type { DB, StreamEventsTable, WebhookDeliveriesTable } from '../db/tables.js';
import { PerTransaction } from '../db/per-transaction.js';
import { prepareQuery } from '../db/prepared.js';
import type { WebhookTopic } from './topics.js';

// The transactional outbox: the seam through which the ledger, the records and the programme
// announce what happened, without knowing who listens. A change enqueues its deliveries in its
// own transaction: a batch that rolls back sends nothing, and one that commits is never lost,
// whatever happens to the process afterwards. The webhook job (webhooks/delivery.ts) sends them.

// Prepared: it runs in every write transaction that may announce something.
const webhookTopics = prepareQuery<{ shopId: number }, { id: number; topic: string; topics: string | null }>((db, p) =>
  db.selectFrom('webhooks').select(['id', 'topic', 'topics']).where('shop_id', '=', p.value('shopId')),
);

/** A webhook and the topics it subscribes to (`*`: every topic). */
interface Hook {
  id: number;
  topics: readonly string[];
}

const subscribes = (hook: Hook, topic: string) => hook.topics.includes(topic) || hook.topics.includes('*');

/** The shop's webhooks and their topics: the outbox's one lookup per transaction. */
async function shopWebhookTopics(db: DB, shopId: number): Promise<Hook[]> {
  const rows = await webhookTopics(db, { shopId });
  return rows.map((row) => ({ id: Number(row.id), topics: row.topics === null ? [row.topic] : (JSON.parse(row.topics) as string[]) }));
}

/** The shop's webhooks, read once per transaction (a batch or an import enqueues many times). */
const hooksOf = new PerTransaction<number, Hook[]>(shopWebhookTopics);

/**
 * Whether every event also goes to the event stream's outbox (stream_events, events/stream.ts):
 * set once by the app from EVENT_STREAM_URL. Off, the outbox writes webhook deliveries alone.
 */
let streaming = false;

export function recordStreamEvents(on: boolean): void {
  streaming = on;
}

/** Whether the shop has a webhook for any of these topics, or every event is streamed. */
export async function wantsTopics(trx: DB, shopId: number, topics: readonly WebhookTopic[]): Promise<boolean> {
  return streaming || (await hooksOf.get(trx, shopId)).some((hook) => topics.some((topic) => subscribes(hook, topic)));
}

/** `evt_` ids, one per event, shared by that event's deliveries to several webhooks. */
function eventIds(count: number): string[] {
  const bytes = randomBytes(12 * count);
  return Array.from({ length: count }, (_, i) => `evt_${bytes.toString('base64url', 12 * i, 12 * i + 12)}`);
}

/** The body of a delivery, exactly as it is POSTed and signed. */
export interface WebhookEventBody {
  id: string;
  topic: WebhookTopic;
  shop_id: number;
  created_at: string;
  /** The record exactly as the API shows it. */
  data: unknown;
}

/**
 * Enqueues one delivery per record per webhook of the shop subscribed to `topic`, in the
 * caller's transaction, with one multi-row insert. `records` are the records as the API shows
 * them; pass a function when building them costs queries, so that a shop without a webhook
 * for the topic pays nothing beyond one indexed lookup per transaction. Returns how many
 * deliveries were enqueued.
 */
export async function enqueueEvents(
  trx: DB,
  shopId: number,
  topic: WebhookTopic,
  records: readonly unknown[] | (() => Promise<readonly unknown[]>),
  now: number,
): Promise<number> {
  const hooks = (await hooksOf.get(trx, shopId)).filter((hook) => subscribes(hook, topic));
  const streamed = streaming;
  if (hooks.length === 0 && !streamed) return 0;
  const data = typeof records === 'function' ? await records() : records;
  if (data.length === 0) return 0;
  const createdAt = isoTime(now);
  const events = eventIds(data.length);
  const payloads = data.map((record, i) =>
    JSON.stringify({ id: events[i]!, topic, shop_id: shopId, created_at: createdAt, data: record } satisfies WebhookEventBody),
  );
  const [ids, streamIds] = await allocateIdsOf(trx, shopId, [
    ['webhook_deliveries', data.length * hooks.length],
    ['stream_events', streamed ? data.length : 0],
  ]);
  const rows: WebhookDeliveriesTable[] = [];
  // Event by event, so each webhook receives the events in the order they happened.
  for (let e = 0; e < data.length; e++) {
    for (const hook of hooks) {
      rows.push({
        shop_id: shopId,
        id: ids![rows.length]!,
        webhook_id: hook.id,
        event_id: events[e]!,
        topic,
        payload: payloads[e]!,
        status: 'pending',
        attempt_count: 0,
        next_attempt_at: now,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        created_at: now,
        updated_at: now,
      });
    }
  }
  if (rows.length > 0) await insertRows(trx, 'webhook_deliveries', rows);
  if (streamed) await insertRows(trx, 'stream_events', streamRows(shopId, streamIds!, events, topic, payloads, now));
  return rows.length;
}

/** The events as the stream's outbox rows, in order, none claimed or published yet. */
function streamRows(shopId: number, ids: number[], events: string[], topic: string, payloads: string[], now: number): StreamEventsTable[] {
  return events.map((eventId, i) => ({
    shop_id: shopId,
    id: ids[i]!,
    event_id: eventId,
    topic,
    payload: payloads[i]!,
    created_at: now,
    published_at: null,
  }));
}
