import type { FieldSpec, FormValues } from '../../components/record-form';
import type { Row } from '../../lib/records';

// Ways to earn (docs/earning.md): the fields of custom_action and visit_url rules, and their
// limits in words ("twice a day").

export const ACTION_KINDS = ['custom_action', 'visit_url'] as const;

const isAction = (v: FormValues) => (ACTION_KINDS as readonly unknown[]).includes(v.kind);

const PERIODS = [
  { value: 'lifetime', label: 'in a lifetime' },
  { value: 'year', label: 'a year' },
  { value: 'month', label: 'a month' },
  { value: 'week', label: 'a week' },
  { value: 'day', label: 'a day' },
] as const;

/** A way to earn's limit in words: "once in a lifetime", "twice a day", "3 times a week". */
export function limitWords(count: number, period: string): string {
  const times = count === 1 ? 'once' : count === 2 ? 'twice' : `${count.toLocaleString('en-US')} times`;
  return `${times} ${PERIODS.find((p) => p.value === period)?.label ?? `a ${period}`}`;
}

/** The limit column of a rule: in words for a way to earn, nothing for the other kinds. */
export const ruleLimit = (r: Row): string => (r.limit_period ? limitWords(Number(r.limit_count ?? 1), String(r.limit_period)) : '—');

/** The form fields of a way to earn, shown when the kind is one. */
export const actionFields: FieldSpec[] = [
  { name: 'name', label: 'Action name', kind: 'text', nullable: true, applies: isAction, placeholder: 'newsletter_signup' },
  { name: 'description', label: 'Description', kind: 'text', nullable: true, applies: isAction, placeholder: 'Join our newsletter' },
  { name: 'url', label: 'Link', kind: 'text', nullable: true, applies: isAction, placeholder: 'https://… (required to visit a page)' },
  { name: 'limit_count', label: 'Times allowed', kind: 'integer', nullable: true, applies: isAction, placeholder: '1' },
  { name: 'limit_period', label: 'Per period', kind: 'select', options: PERIODS, nullable: true, applies: isAction },
  { name: 'claimable', label: 'Shoppers may claim it', kind: 'checkbox', applies: (v) => v.kind === 'custom_action' },
];
