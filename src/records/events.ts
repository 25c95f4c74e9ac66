import type { DB } from '../db/tables.js';
import { enqueueEvents, wantsTopics } from '../events/outbox.js';
import type { WebhookTopic } from '../events/topics.js';
import { selectRecords } from './repository.js';
import { recordsJson, type Resource, type Row } from './resource.js';
import { pushTo } from '../core/maps.js';

// Which record writes announce what (through the outbox, events/outbox.ts): a customer created
// or updated (PUT, import, demo). What the programme does (a referral completing, a tier
// changing) is announced by the programme itself (referrals/, tiers/).

export interface RecordChange {
  /** True when the write created the record. */
  created: boolean;
  /** The record as the API shows it after the write. */
  record: Row;
}

interface Rule {
  topics: readonly WebhookTopic[];
  topicOf(change: RecordChange): WebhookTopic | null;
}

const RULES: Readonly<Record<string, Rule>> = {
  customers: { topics: ['customer.created', 'customer.updated'], topicOf: (c) => (c.created ? 'customer.created' : 'customer.updated') },
};

/** Enqueues the webhook events of these writes of `r`, in the writer's transaction. */
export async function enqueueRecordEvents(trx: DB, shopId: number, r: Resource, changes: readonly RecordChange[], now: number): Promise<void> {
  const rule = RULES[r.table];
  if (rule === undefined) return;
  const byTopic = new Map<WebhookTopic, Row[]>();
  for (const change of changes) {
    const topic = rule.topicOf(change);
    if (topic !== null) pushTo(byTopic, topic, change.record);
  }
  for (const [topic, records] of byTopic) await enqueueEvents(trx, shopId, topic, records, now);
}

/**
 * For a bulk upsert by ID (import): call it before the write, and the function it returns after
 * it, in the same transaction. It announces the records created and those a field of which
 * took another value, not those written back unchanged. When the shop has no webhook for the
 * resource's topics both cost nothing more than the outbox's one lookup.
 */
export async function announceUpsert(trx: DB, shopId: number, r: Resource, ids: readonly number[], now: number): Promise<() => Promise<void>> {
  const rule = RULES[r.table];
  if (rule === undefined || ids.length === 0 || !(await wantsTopics(trx, shopId, rule.topics))) return async () => {};
  const read = async () => {
    const rows: Row[] = [];
    for (let i = 0; i < ids.length; i += 500)
      rows.push(
        ...(await selectRecords(trx, shopId, r)
          .where(r.id, 'in', ids.slice(i, i + 500))
          .orderBy(r.id)
          .execute()),
      );
    return rows;
  };
  const before = new Map((await read()).map((row) => [Number(row[r.id]), row]));
  const changed = (row: Row, old: Row | undefined) =>
    old === undefined || Object.keys(row).some((column) => column !== 'updated_at' && String(row[column]) !== String(old[column]));
  return async () => {
    const rows = (await read()).filter((row) => changed(row, before.get(Number(row[r.id]))));
    const records = await recordsJson(trx, shopId, r, rows, now);
    await enqueueRecordEvents(
      trx,
      shopId,
      r,
      records.map((record) => ({ created: !before.has(Number(record[r.id])), record })),
      now,
    );
  };
}
