import { sql, type Kysely } from 'kysely';

// The delivery job serves each webhook's deliveries of each topic in turn (webhooks/repository.ts,
// claimDueDeliveries): it finds the groups that have pending deliveries by a loose scan of this
// index, one probe per group however many deliveries each holds, and each group's oldest due
// deliveries from the same index. A large import's deliveries of one topic no longer hold up
// every other topic's and webhook's behind them.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('webhook_deliveries_pending_groups')
    .on('webhook_deliveries')
    .columns(['shop_id', 'webhook_id', 'topic', 'next_attempt_at', 'id'])
    .where(sql<boolean>`status = 'pending'`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webhook_deliveries_pending_groups').execute();
}
