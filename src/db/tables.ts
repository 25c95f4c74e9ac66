import type { Generated, Kysely } from 'kysely';

// Row types of every table. Times are epoch milliseconds, money is integer hundredths,
// booleans are 0/1 integers: the same representation on SQLite and PostgreSQL.

export interface ShopsTable {
  id: number;
  name: string;
  per_event_expiry: number;
  points_expiry_days: number | null;
  /** Days after an order is placed before the points it earned can be spent; 0 for at once. */
  points_pending_days: number;
  /** Re-tiering after a tier changed: null when done, else the last customer re-tiered (0: from the start). */
  retier_after?: number | null;
  /** What VIP tiers are judged by: the points earned over the customer's lifetime, this calendar year, or the last 12 months. */
  vip_tier_window: Generated<string>;
  /** The first day (days since 1970, UTC) of the window the shop's customers were last re-tiered for. */
  tier_window_from: Generated<number>;
  /** 1 for the demo shop `npm start` created on an empty database (GET /storefront/demo). */
  demo?: Generated<number>;
  /** The IANA time zone of the shop's reports (migration 015). */
  timezone: Generated<string>;
  /** per_lot or inactivity (migration 020). */
  points_expiry_mode: Generated<string>;
  points_inactivity_days?: number | null;
  /** When inactivity expiry was switched on or its period changed. */
  points_inactivity_since?: number | null;
  /** A JSON array of numbers of days. */
  expiry_reminder_days: Generated<string>;
  // Migration 021 (docs/earning.md, "VIP tiers"):
  /** points_earned, amount_spent or orders_count. */
  vip_tier_metric: Generated<string>;
  /** Days a customer who drops below their tier keeps it; null for none. */
  vip_tier_retention_days?: number | null;
  /** The ISO 4217 currency amount_spent counts. */
  currency?: string | null;
  /** Moved on with every change of metric or currency: customers' order sums of an older basis are made again. */
  vip_tier_basis: Generated<number>;
  /** 1: a refunded, voided or cancelled order voids the redemption whose code it used. */
  restore_redeemed_points_on_refund: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface ApiTokensTable {
  shop_id: number;
  id: number;
  name: string;
  token_hash: string;
  token_hint: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** Space-separated scopes (shops/scopes.ts; migration 018). */
  scopes: Generated<string>;
  /** When the token stops working; null: never (migration 018). */
  expires_at: number | null;
}

/** One write of the merchant API, the CLI or the console (migration 018). */
export interface AuditEventsTable {
  id: Generated<number>;
  shop_id: number;
  occurred_at: number;
  actor_type: string;
  actor_token_id: number | null;
  actor_name: string | null;
  action: string;
  resource: string;
  resource_id: string | null;
  /** JSON: {field: [before, after]}. */
  changes: string;
  request_id: string | null;
}

export interface IdempotencyKeysTable {
  shop_id: number;
  key: string;
  request_hash: string;
  status_code: number;
  response_body: string;
  created_at: number;
}

export interface IdSequencesTable {
  name: string;
  next_id: Generated<number>;
}

export interface CustomersTable {
  shop_id: number;
  remote_id: number;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  birthday: string | null;
  /** When the next birthday grant is due (00:00 UTC of the birthday); -1: schedule it first. */
  birthday_next_at?: number | null;
  /** The calendar year of the last birthday grant. */
  birthday_granted_year?: number | null;
  /** The code friends are referred with; unique in the shop, set when the customer is created. */
  referral_code?: string | null;
  /** The customer's VIP tier, recomputed with every event that changes the points earned. */
  vip_tier_id?: number | null;
  created_at: number;
  updated_at: number;
  // Stored balances (docs/ledger.md): changed only by the ledger, in each event's transaction.
  /** Points in lots not yet written off: the sum of the customer's events. */
  points_balance: Generated<number>;
  /** Hundredths of a credit, likewise. */
  credits_balance: Generated<number>;
  points_pending: Generated<number>;
  points_earned_lifetime: Generated<number>;
  points_spent_lifetime: Generated<number>;
  /** The points earned from tier_window_from on: what the customer's VIP tier is judged by. */
  points_earned_window: Generated<number>;
  /** The first day (days since 1970, UTC) of the window points_earned_window sums. */
  tier_window_from: Generated<number>;
  /** Until when the customer keeps a tier their metric dropped below (migration 021). */
  vip_tier_retained_until: Generated<number | null>;
  /** Paid totals less refunds (hundredths of the shop's currency) and paid orders, in the window, for order_window_key. */
  amount_spent_window: Generated<number>;
  orders_count_window: Generated<number>;
  /** `basis:first day` of the shop the order sums were made for; null: never made. */
  order_window_key: Generated<string | null>;
  /** The earliest expiry among lots that still hold something (possibly already past). */
  next_expiry_at: number | null;
  /** What remains in the points lots expiring at next_expiry_at. */
  next_expiry_points: Generated<number>;
  /** Hundredths of a credit in the credits lots expiring at next_expiry_at. */
  next_expiry_credits: Generated<number>;
  /** The last posting's time; null once the balance was written off for inactivity (migration 020). */
  points_active_at?: number | null;
  /** Set anew, at random, wherever the customer's lots change (migration 023); 0: never set. */
  lots_version: Generated<number>;
}

export interface ExpiryRemindersTable {
  shop_id: number;
  customer_remote_id: number;
  expires_at: number;
  days_before: number;
  created_at: number;
}

export interface ExpiryReminderCursorsTable {
  shop_id: number;
  days_before: number;
  basis: string;
  after_at: number;
  after_id: number;
}

export interface PointsEventsTable {
  shop_id: number;
  id: number;
  customer_remote_id: number;
  source: string;
  points_amount: number;
  /** Hundredths of a credit. */
  credits_amount: number;
  internal_note: string | null;
  external_note: string | null;
  custom_action_name: string | null;
  applied_at: number;
  expires_at: number | null;
  created_at: number;
  points_balance: number;
  credits_balance: number;
  /** The event this one undoes (source reversal); at most one reversal per event. */
  reverses_event_id: number | null;
  /** The redemption whose points this event spent or gave back. */
  redemption_id: number | null;
  /** The earning rule that wrote it. */
  earning_rule_id?: number | null;
  /** The order it was earned for or clawed back from. */
  order_remote_id?: number | null;
  /** The campaign the order earned under. */
  campaign_id?: number | null;
}

export type LotKind = 'points' | 'credits';

export interface PointsLotsTable {
  shop_id: number;
  id: number;
  customer_remote_id: number;
  kind: LotKind;
  event_id: number;
  amount: number;
  remaining: number;
  expires_at: number | null;
  created_at: number;
}

/**
 * What an event took from a lot (a deduction, an expiration, the reversal of a grant), or,
 * negative, gave back to it (the reversal of a deduction restores the very lots it took).
 */
export interface LotConsumptionsTable {
  shop_id: number;
  event_id: number;
  lot_id: number;
  amount: number;
}

/** Records synced from the commerce platform are keyed by remote_id, native ones by id. */
interface Timestamps {
  created_at: number;
  updated_at: number;
}

export interface OrdersTable extends Timestamps {
  shop_id: number;
  remote_id: number;
  customer_remote_id: number | null;
  /** Hundredths of the currency. */
  total: number;
  currency: string;
  financial_status: string;
  placed_at: number;
  /** Hundredths of the currency refunded so far. */
  total_refunded: Generated<number>;
  // What the order did to the ledger (docs/earning.md); changed only by the earning rules.
  /** The customer the order's points went to; null until it earns. */
  points_customer_remote_id: number | null;
  earned_at: number | null;
  earning_rule_id: number | null;
  points_earned: Generated<number>;
  credits_earned: Generated<number>;
  points_reversed: Generated<number>;
  credits_reversed: Generated<number>;
  /** What a refund could not take back (the customer had spent it). */
  points_unrecovered: Generated<number>;
  credits_unrecovered: Generated<number>;
  /** Earned points not spendable until pending_release_at. */
  points_pending: Generated<number>;
  pending_release_at: number | null;
  /** A JSON array of the codes the order used (migration 021). */
  discount_codes?: string | null;
  /** What the order counts in customer_order_days: for whom, on which day, in which currency, how much. */
  counted_customer_remote_id?: number | null;
  counted_day?: number | null;
  counted_currency?: string | null;
  counted_amount?: Generated<number>;
  /** The campaign the order earned under, if any (docs/earning.md, "Campaigns"). */
  campaign_id?: number | null;
}

export interface SubscriptionContractsTable extends Timestamps {
  shop_id: number;
  remote_id: number;
  customer_remote_id: number;
  status: string;
  next_billing_date: number;
}

export interface SubscriptionBillingAttemptsTable extends Timestamps {
  shop_id: number;
  id: number;
  subscription_contract_remote_id: number;
  status: string;
  /** Hundredths of the currency. */
  amount: number;
  currency: string;
  failure_reason: string | null;
  attempted_at: number;
}

export interface RewardsTable extends Timestamps {
  shop_id: number;
  id: number;
  name: string;
  points_price: number;
  kind: string;
  /** Hundredths (of the currency, or of a percent). */
  value: number;
  enabled: number;
  /** Redemptions a customer may make of it (voided ones count too); null for no limit. */
  limit_per_customer: number | null;
  /** Starts every code generated for it. */
  code_prefix: string | null;
  /** Codes issued for it expire this many days after the redemption; null for never. */
  code_valid_days: number | null;
  /** 1 once codes were uploaded for it (POST /rewards/{id}/codes): it issues pool codes only. */
  has_code_pool: Generated<number>;
}

/** A code a merchant uploaded for a reward; issued once, to one redemption. */
export interface RewardCodesTable {
  shop_id: number;
  id: number;
  reward_id: number;
  code: string;
  redemption_id: number | null;
  created_at: number;
}

export type RedemptionStatus = 'issued' | 'used' | 'voided';

export interface RedemptionsTable extends Timestamps {
  shop_id: number;
  id: number;
  reward_id: number;
  /** The reward's name when it was redeemed. */
  reward_name: string;
  customer_remote_id: number;
  points_spent: number;
  code: string;
  status: RedemptionStatus;
  expires_at: number | null;
  /** The reward_redemption event that spent the points. */
  points_event_id: number;
  /** The reversal that gave them back, once voided. */
  void_event_id: number | null;
  used_at: number | null;
  voided_at: number | null;
  /** The order that used the code (migration 021). */
  order_remote_id: number | null;
}

export interface VipTiersTable extends Timestamps {
  shop_id: number;
  id: number;
  name: string;
  points_threshold: number;
  /** Hundredths: 150 multiplies what the order rule earns by 1.5. */
  earning_multiplier: Generated<number>;
}

/** A customer's tier changing, written in the transaction that changed it. */
export interface VipTierChangesTable {
  shop_id: number;
  id: number;
  customer_remote_id: number;
  from_tier_id: number | null;
  /** Names as they were at the change. */
  from_tier_name: string | null;
  to_tier_id: number | null;
  to_tier_name: string | null;
  /** The points earned that the new tier was judged by. */
  points_earned: number;
  /** The shop's vip_tier_metric then; points_earned holds its value (amount_spent in hundredths). */
  metric?: string;
  created_at: number;
}

export interface ReferralsTable extends Timestamps {
  shop_id: number;
  id: number;
  referrer_remote_id: number;
  referred_email: string;
  /** The e-mail as referrals compare it (referrals/email.ts). */
  referred_email_key: string | null;
  status: string;
  /** The referrer's code, when the referral was made with it. */
  referral_code: string | null;
  /** The friend's customer, once completed. */
  referred_remote_id: number | null;
  completed_at: number | null;
  cancelled_at: number | null;
}

export interface WebhooksTable extends Timestamps {
  shop_id: number;
  id: number;
  topic: string;
  /** A JSON array of topics, ["*"] for all; topic is its first. */
  topics: string | null;
  url: string;
  /** Signs deliveries; shown once, when the webhook is created. */
  secret: string;
}

/** A time-boxed multiplier or bonus on orders (docs/earning.md, "Campaigns"). */
export interface CampaignsTable extends Timestamps {
  shop_id: number;
  id: number;
  name: string;
  starts_at: number;
  ends_at: number;
  /** Hundredths (150: ×1.50); null for none. */
  multiplier: number | null;
  bonus_points: number | null;
  /** A JSON array of VIP tier ids; [] for every customer. */
  vip_tier_ids: string;
  cancelled_at: number | null;
  started_announced: Generated<number>;
  ended_announced: Generated<number>;
  /** When the next of campaign.started and campaign.ended is due; null when none is left. */
  announce_at: number | null;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** The webhook outbox: one row per event per webhook, its payload frozen when the change commits. */
export interface WebhookDeliveriesTable extends Timestamps {
  shop_id: number;
  id: number;
  webhook_id: number;
  /** `evt_…`, shared by the deliveries of one event to several webhooks. */
  event_id: string;
  topic: string;
  /** The exact body POSTed (and signed). */
  payload: string;
  status: DeliveryStatus;
  attempt_count: number;
  /** When the job may send it next; while a process is sending it, the end of its lease. */
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
}

/** The event stream's outbox (migration 026, events/stream.ts): one row per event, while EVENT_STREAM_URL is set. */
export interface StreamEventsTable {
  shop_id: number;
  id: number;
  /** `evt_…`, the webhook deliveries' event id too; the stream's Nats-Msg-Id. */
  event_id: string;
  topic: string;
  /** The body a webhook would carry. */
  payload: string;
  created_at: number;
  /** When the stream acknowledged it. */
  published_at: number | null;
}

/** A relay's lease on a shop's events: no other relay publishes them until claimed_until (events/stream.ts). */
export interface StreamLeasesTable {
  shop_id: number;
  claimed_by: string;
  claimed_until: number;
}

export interface WebhookAttemptsTable {
  shop_id: number;
  delivery_id: number;
  /** 1, 2, … per delivery. */
  attempt: number;
  attempted_at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * What changed a customer's points earned, per day the points were earned (a reversed grant and
 * a refund's clawback count on the day of the grant): their sum is points_earned_lifetime.
 */
export interface CustomerEarnedDaysTable {
  shop_id: number;
  customer_remote_id: number;
  /** Days since 1970-01-01, UTC. */
  day: number;
  points: number;
}

/** Per customer, day and currency: paid order totals less refunds (hundredths) and paid orders (migration 021). */
export interface CustomerOrderDaysTable {
  shop_id: number;
  customer_remote_id: number;
  day: number;
  currency: string;
  amount: number;
  orders: number;
}

/** A customer erased by DELETE /customers/{remote_id}: no more than that it happened. */
export interface CustomerRedactionsTable {
  shop_id: number;
  remote_id: number;
  redacted_at: number;
}

/** How many rows a shop has in a listed table; kept by triggers (migration 008). */
export interface ShopCountsTable {
  shop_id: number;
  table_name: string;
  n: number;
}

/** What one span of time changed in a shop's ledger, by kind of event, signed as reports show it (src/ledger/totals.ts). */
export interface LedgerFlows {
  points_earned: number;
  points_redeemed: number;
  points_deducted: number;
  points_expired: number;
  points_reversed: number;
  points_clawed_back: number;
  /** The change of the points pending. */
  points_pending: number;
  credits_earned: number;
  credits_redeemed: number;
  credits_deducted: number;
  credits_expired: number;
  credits_reversed: number;
  credits_clawed_back: number;
}

/** A shop's ledger flows per UTC quarter hour (quarters since 1970). */
export interface LedgerQuartersTable extends LedgerFlows {
  shop_id: number;
  quarter: number;
}

/** A shop's ledger flows per local day in its time zone (days since 1970-01-01, local). */
export interface LedgerDaysTable extends LedgerFlows {
  shop_id: number;
  day: number;
}

/** A shop's ledger in all: what its customers' stored balances and pending points add up to. */
export interface LedgerTotalsTable {
  shop_id: number;
  points_outstanding: number;
  credits_outstanding: number;
  points_pending: number;
  customers_with_points: number;
}

/** How many customers hold each VIP tier; kept by triggers (migration 015). */
export interface TierMembersTable {
  shop_id: number;
  vip_tier_id: number;
  n: number;
}

/** How many redemptions of each reward were made each UTC day; kept by a trigger (migration 015). */
export interface RewardRedemptionDaysTable {
  shop_id: number;
  reward_id: number;
  day: number;
  n: number;
}

export type EarningRuleKind =
  'order' | 'signup' | 'birthday' | 'referral_referrer' | 'referral_friend' | 'subscription_billing' | 'custom_action' | 'visit_url';

export type LimitPeriod = 'lifetime' | 'year' | 'month' | 'week' | 'day';

export interface EarningRulesTable extends Timestamps {
  shop_id: number;
  id: number;
  kind: EarningRuleKind;
  enabled: number;
  points_per_unit: number | null;
  /** Hundredths of the currency. */
  unit_amount: number | null;
  min_order_total: number | null;
  currency: string | null;
  points_amount: number | null;
  /** Hundredths of a credit. */
  credits_amount: number | null;
  /** custom_action and visit_url (ways to earn): what custom_action_name holds; null for the other kinds. */
  name: string | null;
  description: string | null;
  url: string | null;
  limit_count: number | null;
  limit_period: LimitPeriod | null;
  claimable: number;
}

/** A customer's grants by a way to earn in the period from period_start (migration 025). */
export interface EarningActionCountsTable {
  shop_id: number;
  customer_remote_id: number;
  rule_id: number;
  period_start: number;
  times: number;
  last_at: number;
}

/** The event an action of a distinct_id granted a customer (migration 025). */
export interface EarningActionClaimsTable {
  shop_id: number;
  customer_remote_id: number;
  distinct_id: string;
  rule_id: number;
  points_event_id: number;
  created_at: number;
}

/** A storefront key (storefront/keys.ts); allowed_origins is a JSON array of origins. */
export interface StorefrontKeysTable {
  shop_id: number;
  id: number;
  publishable_key: string;
  secret: string;
  allowed_origins: string;
  created_at: number;
  updated_at: number;
}

/** One allowed origin of a storefront key, found by origin when a CORS preflight carries no key. */
export interface StorefrontKeyOriginsTable {
  shop_id: number;
  key_id: number;
  origin: string;
}

/** A store that sends its webhooks here (docs/connections.md). */
export interface ConnectionsTable extends Timestamps {
  shop_id: number;
  id: number;
  platform: string;
  name: string;
  shop_domain: string | null;
  store_url: string | null;
  /** The platform's signing secret; never shown. */
  secret: string;
  earn_on: string;
  accept_test_orders: number;
  status: string;
}

/** One webhook a connection received, once per dedupe key. */
export interface ConnectionDeliveriesTable {
  shop_id: number;
  id: number;
  connection_id: number;
  topic: string;
  dedupe_key: string;
  received_at: number;
  status: string;
  error: string | null;
  resource: string | null;
  resource_id: number | null;
  customer_remote_id: number | null;
  body_bytes: number;
  replayed_at: number | null;
  updated_at: number;
}

/** A delivery's body as received, until pruned or erased. */
export interface ConnectionDeliveryBodiesTable {
  shop_id: number;
  delivery_id: number;
  received_at: number;
  body: string;
}

/** A refund recorded once per refund id (Shopify refunds/create). */
export interface ConnectionRefundsTable {
  shop_id: number;
  refund_id: number;
  order_remote_id: number;
  /** Integer hundredths. */
  amount: number;
  created_at: number;
}

/** The source's updated_at of an order or customer applied, and an order's own refunded figure. */
export interface ConnectionSourcesTable {
  shop_id: number;
  kind: string;
  remote_id: number;
  source_updated_at: number;
  own_refunded: number | null;
}

export interface Tables {
  shops: ShopsTable;
  api_tokens: ApiTokensTable;
  audit_events: AuditEventsTable;
  idempotency_keys: IdempotencyKeysTable;
  id_sequences: IdSequencesTable;
  customers: CustomersTable;
  customer_redactions: CustomerRedactionsTable;
  customer_earned_days: CustomerEarnedDaysTable;
  customer_order_days: CustomerOrderDaysTable;
  points_events: PointsEventsTable;
  points_lots: PointsLotsTable;
  lot_consumptions: LotConsumptionsTable;
  orders: OrdersTable;
  subscription_contracts: SubscriptionContractsTable;
  subscription_billing_attempts: SubscriptionBillingAttemptsTable;
  rewards: RewardsTable;
  reward_codes: RewardCodesTable;
  redemptions: RedemptionsTable;
  shop_counts: ShopCountsTable;
  ledger_quarters: LedgerQuartersTable;
  ledger_days: LedgerDaysTable;
  ledger_totals: LedgerTotalsTable;
  tier_members: TierMembersTable;
  reward_redemption_days: RewardRedemptionDaysTable;
  earning_rules: EarningRulesTable;
  earning_action_counts: EarningActionCountsTable;
  earning_action_claims: EarningActionClaimsTable;
  vip_tier_changes: VipTierChangesTable;
  vip_tiers: VipTiersTable;
  referrals: ReferralsTable;
  webhooks: WebhooksTable;
  campaigns: CampaignsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  stream_events: StreamEventsTable;
  stream_leases: StreamLeasesTable;
  storefront_keys: StorefrontKeysTable;
  storefront_key_origins: StorefrontKeyOriginsTable;
  expiry_reminders: ExpiryRemindersTable;
  expiry_reminder_cursors: ExpiryReminderCursorsTable;
  connections: ConnectionsTable;
  connection_deliveries: ConnectionDeliveriesTable;
  connection_delivery_bodies: ConnectionDeliveryBodiesTable;
  connection_refunds: ConnectionRefundsTable;
  connection_sources: ConnectionSourcesTable;
}

export type DB = Kysely<Tables>;
