import { Type, type TSchema } from 'typebox';
import { derive } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';

// The shapes of the storefront API (docs/storefront.md) and of the storefront keys the
// merchant API manages. What a shopper sees of a customer, an event or a reward is picked from
// the merchant's schema of it, so the two sides describe a field once; the serialiser writes
// only what a schema names, so internal_note and the like never leave through this side.

const Origin = Type.String({
  maxLength: 255,
  pattern: '^https?://[^/?#\\s]+$',
  description: 'A browser origin: scheme, host and port only, as a browser sends it in `Origin`',
  examples: ['https://shop.example'],
});

export const MAX_ORIGINS = 50;

export const StorefrontKeyInput = Type.Object(
  {
    allowed_origins: Type.Array(Origin, {
      maxItems: MAX_ORIGINS,
      description: 'Origins whose pages may call the storefront API with this key (CORS); empty for none',
    }),
  },
  { additionalProperties: false, title: 'StorefrontKeyInput' },
);

const keyFields = {
  id: Type.Integer({ examples: [3] }),
  publishable_key: Type.String({
    description: 'Public: the `kid` of customer tokens, and the `X-Publishable-Key` of GET /programme',
    examples: ['pk_Yq3nF0c2kT7mZpW1xR4s'],
  }),
  allowed_origins: Type.Array(Type.String(), { examples: [['https://shop.example']] }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
};

export const StorefrontKey = Type.Object(keyFields, { $id: 'StorefrontKey', title: 'Storefront key' });

export const StorefrontKeyCreated = Type.Object(
  {
    ...keyFields,
    secret: Type.String({
      description: 'Signs customer tokens (HS256, the whole `sks_…` string as the key). Shown only in this response; keep it on your server',
      examples: ['sks_3kTq9…'],
    }),
  },
  { $id: 'StorefrontKeyCreated', title: 'Storefront key, with its secret' },
);

export const StorefrontTokenInput = Type.Object(
  {
    ttl_seconds: Type.Optional(
      Type.Integer({ minimum: 60, maximum: 86_400, default: 3600, description: 'Lifetime of the token (default 3600)', examples: [3600] }),
    ),
  },
  { additionalProperties: false },
);

export const StorefrontToken = Type.Object(
  {
    token: Type.String({ description: 'A customer token: send it as `Authorization: Bearer <token>` to /storefront_api/v1/me…' }),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'StorefrontToken', title: 'Customer token' },
);

const Nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number> | ReturnType<typeof Type.String>>(t: T) =>
  Type.Union([t, Type.Null()]);

const WAY_TO_EARN = {
  id: Type.Integer({ description: 'The rule to claim (POST /me/actions {"rule_id"})', examples: [12] }),
  kind: Type.Union([Type.Literal('custom_action'), Type.Literal('visit_url')]),
  name: Type.String({ examples: ['newsletter_signup'] }),
  description: Nullable(Type.String({ examples: ['Join our newsletter'] })),
  url: Nullable(Type.String({ examples: ['https://example.com/blog'] })),
  points_amount: Type.Integer({ examples: [50] }),
  credits_amount: Type.Number({ examples: [0] }),
  limit_count: Type.Integer({ description: 'How many times per limit_period', examples: [1] }),
  limit_period: Type.Union([Type.Literal('lifetime'), Type.Literal('year'), Type.Literal('month'), Type.Literal('week'), Type.Literal('day')]),
  claimable: Type.Boolean({ description: 'The shopper may claim it themselves' }),
};

const WayToEarnSchema = Type.Object(WAY_TO_EARN, { $id: 'StorefrontWayToEarn', title: 'Way to earn' });

export const MeWayToEarn = Type.Object(
  {
    ...WAY_TO_EARN,
    completed: Type.Integer({ description: "Times the customer did it in the current period (in the shop's time zone)", examples: [0] }),
    available: Type.Boolean({ description: 'Whether the customer may do it now: under its limit' }),
    available_at: Nullable(
      Type.String({ format: 'date-time', description: 'When not available: when the next period begins; null when available now or never again' }),
    ),
  },
  { $id: 'StorefrontMyWayToEarn', title: "Way to earn, with the shopper's progress" },
);

export const MeActionInput = Type.Object(
  { rule_id: Type.Integer({ minimum: 1, description: 'The id of a claimable way to earn (GET /me/ways_to_earn)', examples: [12] }) },
  { additionalProperties: false, examples: [{ rule_id: 12 }] },
);

export const Programme = Type.Object(
  {
    shop: Type.Object({
      name: Type.String({ examples: ['Acme'] }),
      currency: Nullable(Type.String({ description: "The shop's currency, if set", examples: ['EUR'] })),
    }),
    earning_rules: Type.Array(
      Type.Object({
        kind: Type.String({ examples: ['order'] }),
        points_per_unit: Nullable(Type.Integer({ examples: [1] })),
        unit_amount: Nullable(Type.Number({ examples: [1] })),
        min_order_total: Nullable(Type.Number()),
        currency: Nullable(Type.String({ examples: ['EUR'] })),
        points_amount: Nullable(Type.Integer()),
        credits_amount: Nullable(Type.Number()),
      }),
      { description: 'The enabled earning rules' },
    ),
    rewards: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), kind: Type.String(), value: Type.Number(), points_price: Type.Integer() }), {
      description: 'The enabled rewards',
    }),
    vip_tiers: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), points_threshold: Type.Integer(), earning_multiplier: Type.Number() }), {
      description: 'Every tier, lowest threshold first',
    }),
    ways_to_earn: Type.Array(WayToEarnSchema, { description: 'The enabled custom_action and visit_url rules, oldest first (docs/earning.md, "Ways to earn")' }),
    campaigns: Type.Array(
      Type.Object({
        name: Type.String({ examples: ['Double points weekend'] }),
        status: Type.Union([Type.Literal('active'), Type.Literal('scheduled')]),
        starts_at: Type.String({ format: 'date-time' }),
        ends_at: Type.String({ format: 'date-time' }),
        multiplier: Nullable(Type.Number({ examples: [2] })),
        bonus_points: Nullable(Type.Integer({ examples: [50] })),
        vip_tier_ids: Type.Array(Type.Integer(), { description: 'Empty: for everyone' }),
      }),
      { description: 'Running now or later, soonest first (docs/storefront.md)' },
    ),
  },
  { $id: 'StorefrontProgramme', title: 'Programme' },
);

const customer = derive(customers).record as unknown as { properties: Record<string, TSchema> };

/** A schema without its words: the merchant's Customer schema describes these fields once. */
function bare(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(bare);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== 'description' && key !== 'examples')
      .map(([key, value]) => [key, bare(value)]),
  );
}
const pick = <K extends string>(names: readonly K[]) =>
  Object.fromEntries(names.map((name) => [name, Type.Unsafe(bare(customer.properties[name]) as TSchema)]));

export const Me = Type.Object(
  {
    ...pick([
      'remote_id',
      'email',
      'first_name',
      'points_balance',
      'credits_balance',
      'points_pending',
      'points_earned_lifetime',
      'vip_tier',
      'vip_tier_progress',
      'next_expiry',
    ]),
    upcoming_expiries: Type.Array(Type.Object({ expires_at: Type.String({ format: 'date-time' }), points: Type.Integer(), credits: Type.Number() }), {
      maxItems: 5,
      description: 'What expires at each of the next 5 expiry instants, soonest first',
    }),
    ...pick(['referral_code', 'birthday']),
  },
  {
    $id: 'StorefrontCustomer',
    title: "The shopper's own account",
    description: "The fields of the merchant API's Customer that the shopper sees (described there), and upcoming_expiries",
  },
);

const nullable = <T extends ReturnType<typeof Type.Integer> | ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

/** A points event as the shopper sees it: no internal_note, no balances of the moment, no links of internal use. */
export const MePointsEvent = Type.Object(
  {
    id: Type.Integer(),
    source: Type.String({ examples: ['order'] }),
    points_amount: Type.Integer(),
    credits_amount: Type.Number(),
    external_note: nullable(Type.String()),
    custom_action_name: nullable(Type.String()),
    applied_at: Type.String({ format: 'date-time' }),
    expires_at: nullable(Type.String({ format: 'date-time' })),
    order_remote_id: nullable(Type.Integer()),
    reversed_by_event_id: nullable(Type.Integer()),
  },
  { $id: 'StorefrontPointsEvent', title: 'Points event, as the shopper sees it' },
);

export const MeReward = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    kind: Type.String(),
    value: Type.Number(),
    points_price: Type.Integer(),
    affordable: Type.Boolean({ description: 'The customer has the points it costs' }),
    points_needed: Type.Integer({ description: 'Points still missing; 0 when affordable' }),
    redemptions_left: Type.Union([Type.Integer(), Type.Null()], { description: 'Redemptions the customer has left under its limit; null without a limit' }),
  },
  { $id: 'StorefrontReward', title: 'Reward, as the shopper sees it' },
);

export const BirthdayInput = Type.Object(
  { birthday: Type.String({ format: 'date', description: 'YYYY-MM-DD', examples: ['1990-05-17'] }) },
  { additionalProperties: false },
);

export const MeRedemptionInput = Type.Object(
  { reward_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, examples: [12] }) },
  { additionalProperties: false },
);

export const MeReferralInput = Type.Object(
  {
    referred_email: Type.String({
      minLength: 1,
      maxLength: 254,
      format: 'email',
      description: 'E-mail address of the invited friend',
      examples: ['grace@example.com'],
    }),
  },
  { additionalProperties: false },
);
