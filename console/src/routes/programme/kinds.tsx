import type { RecordKind } from '../../components/record-section';
import type { FieldSpec, FormValues } from '../../components/record-form';
import { formatCredits, formatPoints } from '../../lib/format';
import { labelOf, optionsOf, REWARD_KINDS, RULE_KINDS } from '../../lib/labels';
import type { Row } from '../../lib/records';
import { useShop } from '../../lib/shop';
import { ToggleEnabled } from './toggle-enabled';
import { CodeStock, UploadCodes } from './upload-codes';
import { actionFields, ruleLimit } from './ways-to-earn';

// The programme's records as their pages show them (docs/earning.md, console/README.md). Field names
// are the API's, so its validation errors land beside the field they name.

const isOrder = (v: FormValues) => v.kind === 'order';
const notOrder = (v: FormValues) => v.kind !== 'order';
const yesNo = (value: unknown) => (value ? 'Yes' : 'No');
const orNone = (value: unknown, show: (v: number) => string = String) => (value === null || value === undefined ? '—' : show(Number(value)));

/** What a rule earns, in words. */
function earns(r: Row): string {
  const credits = r.credits_amount ? ` + ${formatCredits(Number(r.credits_amount))} credit` : '';
  if (r.kind !== 'order') return `${formatPoints(Number(r.points_amount ?? 0))} points${credits}`;
  const minimum = r.min_order_total === null ? '' : `, orders from ${formatCredits(Number(r.min_order_total))}`;
  const currency = r.currency === null ? '' : ` ${String(r.currency)}`;
  return `${formatPoints(Number(r.points_per_unit))} per ${formatCredits(Number(r.unit_amount))}${currency}${minimum}${credits}`;
}

const ruleFields: FieldSpec[] = [
  { name: 'kind', label: 'Kind', kind: 'select', options: optionsOf(RULE_KINDS) },
  { name: 'enabled', label: 'Enabled', kind: 'checkbox', initial: true },
  { name: 'points_per_unit', label: 'Points per unit', kind: 'integer', nullable: true, applies: isOrder },
  { name: 'unit_amount', label: 'Unit amount', kind: 'decimal', nullable: true, applies: isOrder, placeholder: '1.00' },
  { name: 'min_order_total', label: 'Minimum order total', kind: 'decimal', nullable: true, applies: isOrder, placeholder: 'none' },
  { name: 'currency', label: 'Currency', kind: 'text', nullable: true, applies: isOrder, placeholder: 'any, or EUR' },
  { name: 'points_amount', label: 'Points', kind: 'integer', nullable: true, applies: notOrder },
  { name: 'credits_amount', label: 'Store credit', kind: 'decimal', nullable: true, placeholder: 'none' },
  ...actionFields,
];

export const earningRules: RecordKind = {
  path: '/merchant_api/v1/earning_rules',
  title: 'Earning rules',
  singular: 'earning rule',
  empty: 'No earning rules yet: customers earn nothing until one is created.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Kind', words: true, cell: (r) => labelOf(RULE_KINDS, r.kind) + (r.name ? `: ${String(r.name)}` : '') },
    { label: 'Earns', cell: earns },
    { label: 'Limit', cell: ruleLimit },
    { label: 'Enabled', words: true, cell: (r) => yesNo(r.enabled) },
  ],
  fields: ruleFields,
  editFields: ruleFields,
  remove: { verb: 'Delete', consequence: 'The rule stops earning and is gone for good; points it already granted stay.' },
  actions: (r, refresh) => <ToggleEnabled path="/merchant_api/v1/earning_rules" row={r} name={`earning rule ${r.id}`} onDone={refresh} />,
};

const rewardFields: FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'points_price', label: 'Points price', kind: 'integer' },
  { name: 'kind', label: 'Kind', kind: 'select', options: optionsOf(REWARD_KINDS) },
  { name: 'value', label: 'Value', kind: 'decimal', placeholder: 'amount or percent off' },
  { name: 'enabled', label: 'Enabled', kind: 'checkbox', initial: true },
  { name: 'limit_per_customer', label: 'Limit per customer', kind: 'integer', nullable: true, placeholder: 'no limit' },
  { name: 'code_prefix', label: 'Code prefix', kind: 'text', nullable: true, placeholder: 'SUMMER-' },
  { name: 'code_valid_days', label: 'Code valid days', kind: 'integer', nullable: true, placeholder: 'no expiry' },
];

const percent = new Intl.NumberFormat('en-GB', { maximumFractionDigits: 2 });

/** What a reward gives, in its unit: "10%" off, "5.00 EUR" off (the shop's currency), or nothing to say (free shipping). */
function RewardValue({ reward }: { reward: Row }) {
  const { data: shop } = useShop();
  const value = Number(reward.value);
  if (reward.kind === 'percentage_discount') return <>{percent.format(value)}%</>;
  if (value === 0) return <>—</>;
  return <>{[formatCredits(value), shop?.currency].filter(Boolean).join(' ')}</>;
}

export const rewards: RecordKind = {
  path: '/merchant_api/v1/rewards',
  title: 'Rewards',
  singular: 'reward',
  empty: 'No rewards yet: customers have nothing to spend their points on.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Name', cell: (r) => String(r.name) },
    { label: 'Points price', numeric: true, cell: (r) => formatPoints(Number(r.points_price)) },
    { label: 'Kind', words: true, cell: (r) => labelOf(REWARD_KINDS, r.kind) },
    { label: 'Value', numeric: true, cell: (r) => <RewardValue reward={r} /> },
    { label: 'Limit per customer', numeric: true, cell: (r) => orNone(r.limit_per_customer) },
    { label: 'Codes', words: true, cell: (r) => <CodeStock reward={r} /> },
    // Voided redemptions count too (docs/ledger.md): how often the reward was taken.
    { label: 'Redemptions', numeric: true, cell: (r) => formatPoints(Number(r.redemptions_count ?? 0)) },
    { label: 'Enabled', words: true, cell: (r) => yesNo(r.enabled) },
  ],
  fields: rewardFields,
  editFields: rewardFields,
  remove: { verb: 'Delete', consequence: 'The reward is gone for good; redemptions already made keep their codes.' },
  actions: (r) => <UploadCodes reward={r} />,
};

const tierFields: FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text' },
  { name: 'points_threshold', label: 'Points threshold', kind: 'integer' },
  { name: 'earning_multiplier', label: 'Earning multiplier', kind: 'decimal', placeholder: '1.00' },
];

export const vipTiers: RecordKind = {
  path: '/merchant_api/v1/vip_tiers',
  title: 'VIP tiers',
  singular: 'VIP tier',
  empty: 'No VIP tiers yet: every customer is without a tier.',
  columns: [
    { label: 'ID', cell: (r) => r.id },
    { label: 'Name', cell: (r) => String(r.name) },
    { label: 'Points threshold', numeric: true, cell: (r) => formatPoints(Number(r.points_threshold)) },
    { label: 'Earning multiplier', numeric: true, cell: (r) => `× ${formatCredits(Number(r.earning_multiplier))}` },
    { label: 'Re-tiering', cell: (r) => (r.recompute_status === 'pending' ? 'in progress' : 'done') },
  ],
  fields: tierFields,
  editFields: tierFields,
  remove: { verb: 'Delete', consequence: 'The tier is gone for good; its members are re-tiered in the background.' },
};
