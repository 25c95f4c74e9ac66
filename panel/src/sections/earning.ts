import type { Key } from '../i18n/index.js';
import { esc, section, type View } from '../model.js';

const RULE_WORDS: Record<string, Key> = {
  signup: 'earn_signup',
  birthday: 'earn_birthday',
  referral_referrer: 'earn_referrer',
  referral_friend: 'earn_friend',
  subscription_billing: 'earn_subscription',
};

/** The earning rules in words: "1 point per €1.00 spent", in the rule's currency, else the shop's. */
export function earning({ state, w }: View): string {
  const programme = state.programme;
  if (programme === null) return '';
  // Orders first: what a shopper earns most by.
  const rules = [...programme.earning_rules].sort((a, b) => Number(b.kind === 'order') - Number(a.kind === 'order'));
  const items = rules.flatMap((r) => {
    if (r.kind === 'order' && r.points_per_unit !== null)
      return [w.t('earn_order', { points: w.points(r.points_per_unit), amount: w.money(r.unit_amount ?? 1, r.currency ?? programme.shop.currency) })];
    const key = RULE_WORDS[r.kind];
    return key !== undefined && r.points_amount !== null ? [w.t(key, { points: w.points(r.points_amount) })] : [];
  });
  return items.length === 0 ? '' : section('earn', w.t('earn'), `<ul>${items.map((i) => `<li>${esc(i)}</li>`).join('')}</ul>`);
}
