import { esc, say, type View } from '../model.js';

/** The balance, store credit, pending points, tier and progress, and what expires next. */
export function account({ me, w, state }: View): string {
  const progress = me.vip_tier_progress;
  const next = progress.next_tier;
  const tier = me.vip_tier === null ? say(w, 'no_tier') : say(w, 'tier_member', { tier: me.vip_tier.name });
  const bar =
    next === null
      ? ''
      : `<progress part="progress" max="${next.points_threshold}" value="${Math.min(progress.points_earned, next.points_threshold)}" aria-label="${say(w, 'progress', { tier: next.name })}"></progress>
         <p class="muted">${say(w, 'to_next', { points: w.points(progress.points_needed), tier: next.name })}</p>`;
  const expiry =
    me.next_expiry === null
      ? ''
      : `<p class="muted" part="expiry">${say(w, 'expiry', { points: w.points(me.next_expiry.points), date: w.date(me.next_expiry.expires_at) })}</p>`;
  const currency = state.programme?.shop.currency ?? null;
  const credits = me.credits_balance > 0 ? `<p class="muted">${say(w, 'credit', { amount: w.money(me.credits_balance, currency) })}</p>` : '';
  const pending = me.points_pending > 0 ? `<p class="muted">${say(w, 'pending', { points: w.points(me.points_pending) })}</p>` : '';
  return `<section aria-label="${say(w, 'balance')}" part="summary"><p class="balance" part="balance">${esc(w.points(me.points_balance))}</p>${credits}${pending}
    <p part="tier">${tier}</p>${bar}${expiry}</section>`;
}
