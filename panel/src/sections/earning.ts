import type { Key } from '../i18n/index.js';
import { esc, say, section, type View, type Way } from '../model.js';

// The one "Ways to earn" list: the order, signup, birthday, referral and subscription rules in
// words, then the merchant's custom actions and pages to visit (docs/earning.md, "Ways to earn"),
// each with what it gives, a "Claim" or "Visit" button while the shopper may and can, and what
// is done.

const RULE_WORDS: Record<string, Key> = {
  signup: 'earn_signup',
  birthday: 'earn_birthday',
  referral_referrer: 'earn_referrer',
  referral_friend: 'earn_friend',
  subscription_billing: 'earn_subscription',
};

/** The earning rules in words: "1 point per €1.00 spent", in the rule's currency, else the shop's. */
function ruleItems({ state, w }: View): string[] {
  const programme = state.programme;
  if (programme === null) return [];
  // Orders first: what a shopper earns most by.
  const rules = [...programme.earning_rules].sort((a, b) => Number(b.kind === 'order') - Number(a.kind === 'order'));
  return rules.flatMap((r) => {
    if (r.kind === 'order' && r.points_per_unit !== null)
      return [w.t('earn_order', { points: w.points(r.points_per_unit), amount: w.money(r.unit_amount ?? 1, r.currency ?? programme.shop.currency) })];
    const key = RULE_WORDS[r.kind];
    return key !== undefined && r.points_amount !== null ? [w.t(key, { points: w.points(r.points_amount) })] : [];
  });
}

/** What a way gives and where the shopper is with it: "30 points · done 1 of 2", "5 points · Done, again from 11 Mar 2026". */
function status({ state, w }: View, way: Way): string {
  const currency = state.programme?.shop.currency ?? null;
  const gives = [
    way.points_amount > 0 ? w.points(way.points_amount) : '',
    way.credits_amount > 0 ? w.t('credit', { amount: w.money(way.credits_amount, currency) }) : '',
  ]
    .filter(Boolean)
    .join(' + ');
  if (!way.available) return `${gives} · ${w.t('way_done')}${way.available_at === null ? '' : `, ${w.t('way_again', { date: w.date(way.available_at) })}`}`;
  return way.completed > 0 ? `${gives} · ${w.t('way_done_of', { done: w.number(way.completed), limit: w.number(way.limit_count) })}` : gives;
}

/** A way to earn: a "Claim" button (or "Visit", which opens the page and then claims) while it may be claimed, a mark once done. */
function wayItem(v: View, way: Way): string {
  const { state, w } = v;
  const title = way.description ?? way.name;
  const visit = way.kind === 'visit_url' && way.url !== null;
  const waiting = state.busy === `claim:${way.id}`;
  const button =
    way.claimable && way.available
      ? `<button type="button" part="claim-button" data-action="claim" data-id="${way.id}"${visit ? ` data-url="${esc(way.url)}"` : ''} aria-label="${say(w, visit ? 'way_visit_label' : 'way_claim_label', { name: title })}" ${state.busy === null ? '' : 'disabled'}>${say(w, waiting ? 'way_claiming' : visit ? 'way_visit' : 'way_claim')}</button>`
      : way.available
        ? ''
        : '<span part="way-done" aria-hidden="true">✓</span>';
  return `<li part="way"><span><strong>${esc(title)}</strong><br><span class="muted">${esc(status(v, way))}</span></span>${button}</li>`;
}

export function earning(v: View): string {
  const items = [...ruleItems(v).map((i) => `<li part="way">${esc(i)}</li>`), ...v.state.ways.map((way) => wayItem(v, way))];
  return items.length === 0 ? '' : section('earn', v.w.t('earn'), `<ul>${items.join('')}</ul>`);
}
