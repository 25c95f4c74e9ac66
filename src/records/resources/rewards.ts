import { Type } from 'typebox';
import { redemptionCounts } from '../../redemptions/repository.js';
import { boolean, integer, money, oneOf, text } from '../fields.js';
import type { Resource } from '../resource.js';

export const INT32_MAX = 2_147_483_647;

export const rewards: Resource = {
  table: 'rewards',
  path: 'rewards',
  scope: 'rewards',
  singular: 'reward',
  title: 'Reward',
  tag: 'Rewards',
  plural: 'rewards',
  id: 'id',
  write: 'crud',
  fields: {
    name: text('Name shown to customers', '5 € off your next order', 255, { required: true, sortable: true }),
    points_price: integer('Points it costs', 500, 1, INT32_MAX, { required: true, sortable: true }),
    kind: oneOf('What the reward gives', ['fixed_amount_discount', 'percentage_discount', 'free_shipping', 'free_product'], { required: true }),
    value: money("Amount off (fixed_amount_discount), percent off (percentage_discount), or the product's value; 0 when none", 5, { default: 0 }),
    enabled: boolean('Whether customers can redeem it now', true, { default: true }),
    limit_per_customer: integer('How many times one customer may redeem it (voided redemptions count too); null for no limit', 1, 1, INT32_MAX, {
      nullable: true,
    }),
    code_prefix: text(
      'Starts every code generated for its redemptions (letters, digits, - and _); codes from an uploaded pool are issued as uploaded',
      'SUMMER-',
      20,
      {
        nullable: true,
        pattern: '^[A-Za-z0-9_-]+$',
      },
    ),
    code_valid_days: integer("Days a redemption's code stays usable; null for no expiry", 30, 1, 3650, { nullable: true }),
  },
  computed: {
    schema: {
      redemptions_count: Type.Integer({
        description: 'Times customers redeemed it: a voided redemption still counts (docs/ledger.md), a refused one never does',
        examples: [130],
      }),
    },
    async of(db, shopId, rows) {
      const counts = await redemptionCounts(
        db,
        shopId,
        rows.map((row) => Number(row.id)),
      );
      return rows.map((row) => ({ redemptions_count: counts.get(Number(row.id)) ?? 0 }));
    },
  },
  check: {
    reads: ['kind', 'value'],
    // Stored shape: value in hundredths.
    rule(record) {
      const value = Number(record.value);
      if (record.kind === 'percentage_discount' && (value <= 0 || value > 10_000)) {
        return [{ param: 'value', code: 'invalid_percentage', message: 'value of a percentage_discount must be above 0 and at most 100' }];
      }
      if (record.kind === 'fixed_amount_discount' && value <= 0) {
        return [{ param: 'value', code: 'invalid_amount', message: 'value of a fixed_amount_discount must be above 0' }];
      }
      return [];
    },
  },
};
