// What the API announces, declared apart from who announces it and who delivers it, so that
// both sides depend on this module and not on each other: the ledger announces points events
// (ledger/write.ts, ledger/expiry.ts), the records their writes (records/events.ts), and
// redemptions theirs; webhooks (webhooks/) subscribe to the topics and deliver them.
export const WEBHOOK_TOPICS = [
  'points_event.created',
  'points_event.expired',
  'points.expiring',
  'customer.created',
  'customer.updated',
  'customer.redacted',
  'customer.vip_tier_changed',
  'referral.completed',
  'redemption.created',
  'redemption.voided',
  'campaign.started',
  'campaign.ended',
] as const;

export type WebhookTopic = (typeof WEBHOOK_TOPICS)[number];
