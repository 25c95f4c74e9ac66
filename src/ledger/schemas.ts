import { Type, type Static } from 'typebox';

// The shapes of the points ledger: what a merchant sends, and the event we answer with.

/** Sources a merchant may send (docs/ledger.md). */
export const INPUT_SOURCES = [
  'manual',
  'custom_action',
  'visit_url',
  'referral_complete',
  'instagram_follow',
  'tiktok_follow',
  'facebook_like',
  'facebook_share',
  'twitter_follow',
  'twitter_share',
  'order',
  'refund',
  'signup',
  'birthday',
  'review',
  'import',
] as const;

/** Written only by the expiry sweep. */
export const EXPIRATION_SOURCE = 'expiration';
/** Written only by POST /points_events/{id}/reverse (and by voiding a redemption). */
export const REVERSAL_SOURCE = 'reversal';
/** Written only by POST /redemptions. */
export const REDEMPTION_SOURCE = 'reward_redemption';
/** Written only by the subscription_billing earning rule, for a succeeded billing attempt. */
export const SUBSCRIPTION_SOURCE = 'subscription_billing';

export const ALL_SOURCES = [...INPUT_SOURCES, EXPIRATION_SOURCE, REVERSAL_SOURCE, REDEMPTION_SOURCE, SUBSCRIPTION_SOURCE] as const;

/** Sources whose custom_action_name is required (for visit_url it holds the URL). */
export const NAMED_SOURCES: ReadonlySet<string> = new Set(['custom_action', 'visit_url']);

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
/** Credits per event: hundredths stay far inside 2^53 in any sum. */
export const CREDITS_LIMIT = 1_000_000_000;

export const POINTS_ERROR = { code: 'not_an_int32', message: `points_amount must be an integer between ${INT32_MIN} and ${INT32_MAX}` };
export const CREDITS_ERROR = {
  code: 'invalid_credits_amount',
  message: `credits_amount must be a number between -${CREDITS_LIMIT} and ${CREDITS_LIMIT} with at most 2 decimals`,
};

/** An RFC 3339 time, or blank (empty, spaces or null) for the default. */
const Time = (name: string, description: string) => {
  const error = { code: 'invalid_datetime', message: `${name} must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z, or blank` };
  return Type.Optional(
    Type.Union(
      [Type.String({ format: 'date-time', 'x-error': error }), Type.String({ pattern: '^\\s*$', 'x-error': error }), Type.Null({ 'x-error': error })],
      { description, examples: ['2026-01-15T12:00:00Z'] },
    ),
  );
};

const Note = (description: string) => Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description }));

export const PointsEventInput = Type.Object(
  {
    customer_identifier: Type.String({
      minLength: 1,
      maxLength: 254,
      description: "The customer's remote_id (its ID in the commerce platform) or e-mail address (case-insensitive)",
      examples: ['7012345678', 'ada@example.com'],
    }),
    source: Type.Enum([...INPUT_SOURCES], {
      description: 'Why the points moved. custom_action and visit_url require custom_action_name.',
      examples: ['manual'],
      'x-error': { code: 'invalid_source', message: `source must be one of: ${INPUT_SOURCES.join(', ')}` },
    }),
    points_amount: Type.Optional(
      Type.Integer({
        minimum: INT32_MIN,
        maximum: INT32_MAX,
        description: 'Points to grant (positive) or deduct (negative). At least one of points_amount and credits_amount must be non-zero.',
        examples: [100],
        'x-error': POINTS_ERROR,
      }),
    ),
    credits_amount: Type.Optional(
      Type.Number({
        minimum: -CREDITS_LIMIT,
        maximum: CREDITS_LIMIT,
        description: 'Store credit to grant (positive) or deduct (negative), with at most 2 decimals; kept exactly.',
        examples: [5.5],
        'x-error': CREDITS_ERROR,
      }),
    ),
    internal_note: Note("Why the points moved, for the merchant's staff"),
    external_note: Note('Why the points moved, shown to the customer'),
    custom_action_name: Type.Optional(
      Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], {
        description: "The custom action's name (source custom_action), or the http(s) URL visited (source visit_url)",
        examples: ['Joined the newsletter'],
      }),
    ),
    applied_at: Time('applied_at', 'When the event took place; blank means now. At most 5 minutes in the future.'),
    expires_at: Time(
      'expires_at',
      "When the granted points and credits expire. Only for shops with per_event_expiry; blank means the shop's default (applied_at plus points_expiry_days, or never).",
    ),
  },
  {
    // The title names it in the OpenAPI document, where the batch's items refer to it.
    title: 'PointsEventInput',
    additionalProperties: false,
    description: 'One grant (positive amounts) or deduction (negative amounts) of points and/or store credit for one customer',
    examples: [{ customer_identifier: 'ada@example.com', source: 'order', points_amount: 120, external_note: 'Order #1042' }],
  },
);
export type PointsEventInput = Static<typeof PointsEventInput>;

export const ReverseInput = Type.Object(
  {
    internal_note: Note('Why the event is reversed, for the merchant\'s staff (default: "Reverses points event N")'),
    external_note: Note('Why the event is reversed, shown to the customer'),
  },
  { additionalProperties: false, description: 'Optional notes for the reversal event', examples: [{ internal_note: 'Granted twice by mistake' }] },
);

const batchSchemas = new Map<number, ReturnType<typeof makeBatchInput>>();

function makeBatchInput(maxEvents: number) {
  return Type.Object(
    {
      points_events: Type.Array(PointsEventInput, {
        minItems: 1,
        maxItems: maxEvents,
        description: `1 to ${maxEvents} points events, applied in order, all or nothing`,
      }),
    },
    {
      additionalProperties: false,
      description: 'Points events applied in array order, all or nothing',
      examples: [
        {
          points_events: [
            { customer_identifier: '7012345678', source: 'order', points_amount: 120 },
            { customer_identifier: 'ada@example.com', source: 'custom_action', custom_action_name: 'Newsletter', points_amount: 50 },
            { customer_identifier: '7012345678', source: 'manual', credits_amount: -2.5, internal_note: 'Redeemed at the till' },
          ],
        },
      ],
    },
  );
}

/** The batch body for a configured maximum (one schema object per maximum, compiled once). */
export function BatchInput(maxEvents: number) {
  let schema = batchSchemas.get(maxEvents);
  if (schema === undefined) batchSchemas.set(maxEvents, (schema = makeBatchInput(maxEvents)));
  return schema;
}

export const PointsEvent = Type.Object(
  {
    id: Type.Integer({ examples: [4812] }),
    customer: Type.Object(
      {
        remote_id: Type.Integer({ description: 'Negative for a customer since erased (DELETE /customers)', examples: [7012345678] }),
        email: Type.Union([Type.String(), Type.Null()], { examples: ['ada@example.com'] }),
        points_balance: Type.Integer({ description: 'Points available right after this event', examples: [1250] }),
        credits_balance: Type.Number({ description: 'Store credit available right after this event', examples: [12.5] }),
      },
      { description: 'The customer, with the balances right after this event' },
    ),
    source: Type.Enum([...ALL_SOURCES], {
      description:
        'expiration events are written by the expiry sweep, reversal events by POST /points_events/{id}/reverse, reward_redemption events by POST /redemptions, subscription_billing events by the subscription_billing earning rule',
      examples: ['order'],
    }),
    points_amount: Type.Integer({ examples: [120] }),
    credits_amount: Type.Number({ examples: [0] }),
    internal_note: Type.Union([Type.String(), Type.Null()]),
    external_note: Type.Union([Type.String(), Type.Null()], { examples: ['Order #1042'] }),
    custom_action_name: Type.Union([Type.String(), Type.Null()]),
    applied_at: Type.String({ format: 'date-time' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When what this event granted expires; null for never or for a deduction',
    }),
    created_at: Type.String({ format: 'date-time' }),
    reverses_event_id: Type.Union([Type.Integer(), Type.Null()], { description: 'For a reversal: the event it undoes', examples: [null] }),
    reversed_by_event_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The reversal that undid this event, if any', examples: [null] }),
    redemption_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The reward redemption this event spent points on, or gave them back for',
      examples: [null],
    }),
    earning_rule_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The earning rule that wrote this event, if one did', examples: [null] }),
    order_remote_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The order this event was earned for (source order) or clawed back from by a refund (source refund), if any',
      examples: [null],
    }),
    campaign_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The campaign the order earned under (source order), or whose points a refund took back (source refund), if any',
      examples: [null],
    }),
  },
  { $id: 'PointsEvent', title: 'PointsEvent' },
);
export type PointsEvent = Static<typeof PointsEvent>;
