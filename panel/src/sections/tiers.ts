import { esc, say, section, type View } from '../model.js';

/** Every tier, what it takes and what it gives, the shopper's own marked. */
export function tiers({ state, me, w }: View): string {
  const list = state.programme?.vip_tiers ?? [];
  if (list.length === 0) return '';
  const items = list.map((t) => {
    const gives = t.earning_multiplier === 1 ? w.t('tier_base') : w.t('tier_multiplier', { x: w.number(t.earning_multiplier) });
    const mine = me.vip_tier?.id === t.id;
    return `<li part="tier-item"${mine ? ' aria-current="true"' : ''}><span><strong>${esc(t.name)}</strong>${mine ? ` <span class="badge">${say(w, 'your_tier')}</span>` : ''}<br>
      <span class="muted">${esc(`${w.t('tier_from', { points: w.points(t.points_threshold) })} · ${gives}`)}</span></span></li>`;
  });
  return section('tiers', w.t('tiers'), `<ul>${items.join('')}</ul>`);
}
