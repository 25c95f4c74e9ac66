import type { ErrorDetail } from '../../errors.js';
import { boolean, integer, money, oneOf, text } from '../fields.js';
import type { Resource, Row } from '../resource.js';
import { CURRENCY } from './orders.js';
import { INT32_MAX } from './rewards.js';

export const EARNING_RULE_KINDS = ['order', 'signup', 'birthday', 'referral_referrer', 'referral_friend', 'subscription_billing'] as const;

/** Fields only the order rule reads. */
const ORDER_FIELDS = ['points_per_unit', 'unit_amount', 'min_order_total', 'currency'] as const;

const set = (record: Row, name: string) => record[name] !== null && record[name] !== undefined;

export const earningRules: Resource = {
  table: 'earning_rules',
  path: 'earning_rules',
  scope: 'earning_rules',
  singular: 'earning rule',
  title: 'EarningRule',
  tag: 'Earning rules',
  plural: 'earning rules',
  id: 'id',
  write: 'crud',
  description:
    'How customers earn points (docs/earning.md). At most one enabled rule per kind. order: points_per_unit per unit_amount of the order total ' +
    '(rounded down), when the order is paid; signup: points_amount when a customer is created; birthday: points_amount once a calendar year on the ' +
    "customer's birthday (UTC); referral_referrer and referral_friend: points_amount to each side when a referral completes; subscription_billing: " +
    'points_amount for each succeeded billing attempt. Any rule may also grant credits_amount.',
  fields: {
    kind: oneOf('What the rule rewards', EARNING_RULE_KINDS, { required: true }),
    enabled: boolean('Whether it earns now; at most one enabled rule per kind', true, { default: true }),
    points_per_unit: integer('order: points earned per unit_amount of the order total', 1, 1, INT32_MAX, { nullable: true }),
    unit_amount: money('order: the amount of order total that earns points_per_unit points', 1, { nullable: true, minimum: 0.01 }),
    min_order_total: money('order: orders below this total earn nothing; null for no minimum', 20, { nullable: true }),
    currency: text('order: orders in another currency earn nothing; null for any currency', 'EUR', 3, { ...CURRENCY, nullable: true }),
    points_amount: integer('Every kind but order: the points granted each time', 100, 0, INT32_MAX, { nullable: true }),
    credits_amount: money('Store credit granted each time (for order: per paid order), besides the points', 0, { nullable: true }),
  },
  exclusive: {
    field: 'kind',
    when: { field: 'enabled', value: 1 },
    code: 'rule_kind_taken',
    message: 'Another enabled earning rule of this shop has this kind; disable it first',
  },
  check: {
    reads: ['kind', ...ORDER_FIELDS, 'points_amount', 'credits_amount'],
    rule(record) {
      const errors: ErrorDetail[] = [];
      if (record.kind === 'order') {
        for (const name of ['points_per_unit', 'unit_amount'] as const) {
          if (!set(record, name)) errors.push({ param: name, code: 'missing', message: `${name} is required for an order rule` });
        }
        if (set(record, 'points_amount'))
          errors.push({
            param: 'points_amount',
            code: 'not_applicable',
            message: 'points_amount is for rules of other kinds; an order rule earns points_per_unit per unit_amount',
          });
      } else {
        for (const name of ORDER_FIELDS) {
          if (set(record, name)) errors.push({ param: name, code: 'not_applicable', message: `${name} is only for an order rule` });
        }
        if (!(Number(record.points_amount ?? 0) > 0) && !(Number(record.credits_amount ?? 0) > 0)) {
          errors.push({ param: 'points_amount', code: 'missing', message: `a ${String(record.kind)} rule needs points_amount or credits_amount above 0` });
        }
      }
      return errors;
    },
  },
};
