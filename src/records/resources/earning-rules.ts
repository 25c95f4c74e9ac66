import type { ErrorDetail } from '../../errors.js';
import { boolean, integer, money, oneOf, text } from '../fields.js';
import type { Resource, Row } from '../resource.js';
import { CURRENCY } from './orders.js';
import { INT32_MAX } from './rewards.js';

export const EARNING_RULE_KINDS = [
  'order',
  'signup',
  'birthday',
  'referral_referrer',
  'referral_friend',
  'subscription_billing',
  'custom_action',
  'visit_url',
] as const;

/** The kinds of ways to earn: many rules per shop, one enabled per name, each with a limit (earning/actions.ts). */
export const ACTION_KINDS: readonly string[] = ['custom_action', 'visit_url'];

export const LIMIT_PERIODS = ['lifetime', 'year', 'month', 'week', 'day'] as const;

/** Fields only the order rule reads. */
const ORDER_FIELDS = ['points_per_unit', 'unit_amount', 'min_order_total', 'currency'] as const;

/** Fields only ways to earn read. */
const ACTION_FIELDS = ['name', 'url', 'limit_count', 'limit_period'] as const;

/** A way to earn created without a limit may be done once in a lifetime (each part defaults alone); a visit_url rule is always claimable. */
function completeAction(values: Row): void {
  if (!ACTION_KINDS.includes(values.kind as string)) return;
  if ('limit_count' in values && 'limit_period' in values) {
    values.limit_count ??= 1;
    values.limit_period ??= 'lifetime';
  }
  if (values.kind === 'visit_url' && values.claimable === 0 && 'name' in values && 'enabled' in values) values.claimable = 1;
}

function actionErrors(record: Row): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const kind = String(record.kind);
  if (!ACTION_KINDS.includes(kind)) {
    for (const name of ACTION_FIELDS)
      if (set(record, name)) errors.push({ param: name, code: 'not_applicable', message: `${name} is only for custom_action and visit_url rules` });
    if (record.claimable === 1) errors.push({ param: 'claimable', code: 'not_applicable', message: 'claimable is only for custom_action and visit_url rules' });
    return errors;
  }
  if (!set(record, 'name')) errors.push({ param: 'name', code: 'missing', message: `name is required for a ${kind} rule` });
  if (kind === 'visit_url' && !set(record, 'url'))
    errors.push({ param: 'url', code: 'missing', message: 'url is required for a visit_url rule: the page the shopper visits' });
  if (kind === 'visit_url' && record.claimable === 0)
    errors.push({ param: 'claimable', code: 'not_applicable', message: 'a visit_url rule is always claimable' });
  for (const name of ['limit_count', 'limit_period'] as const) {
    if (!set(record, name))
      errors.push({ param: name, code: 'missing', message: `${name} is required for a ${kind} rule (limit_count 1, limit_period lifetime: once)` });
  }
  return errors;
}

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
    'points_amount for each succeeded billing attempt; custom_action and visit_url (ways to earn, many per shop, one enabled per name): ' +
    'points_amount each time POST /customers/{customer_identifier}/actions names the rule (or the shopper claims it), up to limit_count per ' +
    "limit_period in the shop's time zone. Any rule may also grant credits_amount.",
  fields: {
    kind: oneOf('What the rule rewards', EARNING_RULE_KINDS, { required: true }),
    enabled: boolean('Whether it earns now; at most one enabled rule per kind', true, { default: true }),
    points_per_unit: integer('order: points earned per unit_amount of the order total', 1, 1, INT32_MAX, { nullable: true }),
    unit_amount: money('order: the amount of order total that earns points_per_unit points', 1, { nullable: true, minimum: 0.01 }),
    min_order_total: money('order: orders below this total earn nothing; null for no minimum', 20, { nullable: true }),
    currency: text('order: orders in another currency earn nothing; null for any currency', 'EUR', 3, { ...CURRENCY, nullable: true }),
    points_amount: integer('Every kind but order: the points granted each time', 100, 0, INT32_MAX, { nullable: true }),
    credits_amount: money('Store credit granted each time (for order: per paid order), besides the points', 0, { nullable: true }),
    name: text(
      'custom_action and visit_url: the name actions give (POST /customers/{customer_identifier}/actions) and events show as custom_action_name',
      'newsletter_signup',
      100,
      {
        nullable: true,
        pattern: '\\S',
      },
    ),
    description: text('What the shopper does to earn, as the storefront shows it', 'Join our newsletter', 500, { nullable: true }),
    url: text('visit_url: the page the shopper visits (required); custom_action: a link such as a social profile', 'https://example.com/blog', 2048, {
      nullable: true,
      format: 'uri',
      pattern: '^https?://',
    }),
    limit_count: integer('custom_action and visit_url: how many grants a customer may have per limit_period (default 1)', 1, 1, 1_000_000, { nullable: true }),
    limit_period: oneOf("custom_action and visit_url: the calendar period of limit_count, in the shop's time zone (default lifetime)", LIMIT_PERIODS, {
      nullable: true,
    }),
    claimable: boolean('custom_action: a shopper may claim it from the storefront (POST /storefront_api/v1/me/actions); visit_url rules always are', false, {
      default: false,
    }),
  },
  complete: completeAction,
  exclusive: [
    {
      field: 'kind',
      when: { field: 'enabled', value: 1 },
      except: ACTION_KINDS,
      code: 'rule_kind_taken',
      message: 'Another enabled earning rule of this shop has this kind; disable it first',
    },
    {
      field: 'name',
      when: { field: 'enabled', value: 1 },
      code: 'rule_name_taken',
      message: 'Another enabled earning rule of this shop has this name; disable it first',
    },
  ],
  check: [
    { reads: ['kind', ...ACTION_FIELDS, 'claimable'], rule: actionErrors },
    {
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
  ],
};
