import { esc, say, section, type View } from '../model.js';

/** The rewards, each with a "Redeem" button (disabled when not affordable or used up) and why. */
export function rewards({ state, w }: View): string {
  if (state.rewards.length === 0) return section('rewards', w.t('rewards'), `<p class="muted">${say(w, 'no_rewards')}</p>`);
  const items = state.rewards.map((r) => {
    const left = r.redemptions_left === 0;
    const why = left ? w.t('redeemed_max') : r.affordable ? '' : w.t('more_needed', { points: w.points(r.points_needed) });
    const waiting = state.busy === `redeem:${r.id}`;
    return `<li part="reward"><span><strong>${esc(r.name)}</strong><br><span class="muted">${esc(w.points(r.points_price))}${why ? ` · ${esc(why)}` : ''}</span></span>
      <button type="button" part="redeem-button" data-action="redeem" data-id="${r.id}" aria-label="${say(w, 'redeem_label', { name: r.name })}" ${r.affordable && !left && state.busy === null ? '' : 'disabled'}>${say(w, waiting ? 'redeeming' : 'redeem')}</button></li>`;
  });
  return section('rewards', w.t('rewards'), `<ul>${items.join('')}</ul>`);
}

/** Before any point is spent: what the reward costs and what is left, to confirm or cancel. */
export function confirmDialog({ state, me, w }: View): string {
  const reward = state.rewards.find((r) => r.id === state.confirm);
  if (reward === undefined) return '';
  const cost = w.points(reward.points_price);
  return `<dialog part="dialog" aria-labelledby="confirm-title" aria-describedby="confirm-text"><h2 id="confirm-title">${say(w, 'confirm_title', { name: reward.name })}</h2>
    <p id="confirm-text">${say(w, 'confirm_text', { points: cost, left: w.points(me.points_balance - reward.points_price) })}</p>
    <p class="actions"><button type="button" class="secondary" data-action="cancel">${say(w, 'cancel')}</button>
    <button type="button" part="confirm-button" data-action="confirm" data-id="${reward.id}">${say(w, 'confirm_spend', { points: cost })}</button></p></dialog>`;
}
