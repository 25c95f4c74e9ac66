import { Type, type Static } from 'typebox';

// The shapes of reward redemptions and of a reward's code pool.

/** Most codes one POST /rewards/{id}/codes takes. */
export const MAX_CODES_PER_REQUEST = 10_000;
/** Longest code accepted in a pool (generated ones are prefix + 12 characters). */
export const MAX_CODE_LENGTH = 64;

export const RedemptionInput = Type.Object(
  {
    reward_id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'The reward to redeem', examples: [12] }),
    customer_identifier: Type.String({
      minLength: 1,
      maxLength: 254,
      description: "The customer's remote_id or e-mail address (case-insensitive)",
      examples: ['7012345678', 'ada@example.com'],
    }),
  },
  {
    additionalProperties: false,
    description: 'A customer spends points on a reward',
    examples: [{ reward_id: 12, customer_identifier: 'ada@example.com' }],
  },
);
export type RedemptionInput = Static<typeof RedemptionInput>;

export const REDEMPTION_STATUSES = ['issued', 'used', 'voided'] as const;

export const Redemption = Type.Object(
  {
    id: Type.Integer({ examples: [31] }),
    reward: Type.Object(
      {
        id: Type.Integer({ examples: [12] }),
        name: Type.String({ description: "The reward's name when it was redeemed", examples: ['5 € off your next order'] }),
      },
      { description: 'The reward redeemed' },
    ),
    customer: Type.Object(
      {
        remote_id: Type.Integer({ examples: [7012345678] }),
        email: Type.Union([Type.String(), Type.Null()], { examples: ['ada@example.com'] }),
      },
      { description: 'The customer who redeemed it' },
    ),
    points_spent: Type.Integer({ description: "The reward's points_price when it was redeemed", examples: [500] }),
    code: Type.String({
      description: "The code the customer uses at checkout: the next unused code of the reward's pool, or else generated (code_prefix and 12 characters)",
      examples: ['SUMMER-7KQ2M9XH4RTC'],
    }),
    status: Type.Enum([...REDEMPTION_STATUSES], {
      description:
        'issued: the code can be used; used: the platform consumed the code (POST /redemptions/{id}/use, or an order that lists it in discount_codes); ' +
        'voided: the points were given back (POST /redemptions/{id}/void, or the order that used the code was refunded, voided or cancelled)',
      examples: ['issued'],
    }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: "When the code stops being usable (the reward's code_valid_days after the redemption); null for never",
      examples: ['2026-02-14T12:00:00Z'],
    }),
    points_event_id: Type.Integer({ description: 'The reward_redemption points event that spent the points', examples: [4990] }),
    void_event_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The reversal event that gave the points back, once voided', examples: [null] }),
    used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { examples: [null] }),
    order_remote_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The order that used the code (it listed it in discount_codes); null when no order did',
      examples: [null],
    }),
    voided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { examples: [null] }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Redemption', title: 'Redemption' },
);
export type Redemption = Static<typeof Redemption>;

export const CodesInput = Type.Object(
  {
    codes: Type.Array(
      Type.String({
        minLength: 1,
        maxLength: MAX_CODE_LENGTH,
        pattern: '^[\\x21-\\x7E]+$',
        examples: ['SUMMER-AAAA-0001'],
        'x-error': { code: 'invalid_code', message: `each code must be 1 to ${MAX_CODE_LENGTH} printable ASCII characters without spaces` },
      }),
      {
        minItems: 1,
        maxItems: MAX_CODES_PER_REQUEST,
        description: `1 to ${MAX_CODES_PER_REQUEST} codes, issued oldest upload first; a code already in the shop, or twice in the list, refuses the whole request`,
      },
    ),
  },
  { additionalProperties: false, description: "Codes to add to a reward's pool", examples: [{ codes: ['SUMMER-AAAA-0001', 'SUMMER-AAAA-0002'] }] },
);
export type CodesInput = Static<typeof CodesInput>;

export const CodePool = Type.Object(
  {
    reward_id: Type.Integer({ examples: [12] }),
    available: Type.Integer({ description: 'Uploaded codes not yet issued', examples: [9_870] }),
    issued: Type.Integer({ description: 'Uploaded codes issued to redemptions', examples: [130] }),
    added: Type.Optional(Type.Integer({ description: 'Codes this request added (POST only)', examples: [2] })),
  },
  {
    $id: 'RewardCodePool',
    title: 'RewardCodePool',
    description:
      "A reward's pool of uploaded codes. While it has never had a code, redemptions get generated codes; once it has, an empty pool refuses them (reward_out_of_codes).",
  },
);
export type CodePool = Static<typeof CodePool>;
