import { esc, section, type View } from '../model.js';

/** The campaigns running now or soon for this shopper's tier: what they add to an order, and until when. */
export function offers({ state, me, w }: View): string {
  const tierId = me.vip_tier?.id;
  const mine = (state.programme?.campaigns ?? []).filter((c) => c.vip_tier_ids.length === 0 || (tierId !== undefined && c.vip_tier_ids.includes(tierId)));
  if (mine.length === 0) return '';
  const items = mine.map((c) => {
    const what = [
      c.multiplier !== null && c.multiplier !== 1 ? w.t('offer_multiplier', { x: w.number(c.multiplier) }) : '',
      c.bonus_points !== null && c.bonus_points > 0 ? w.t('offer_bonus', { points: w.points(c.bonus_points) }) : '',
      c.status === 'active' ? w.t('offer_until', { date: w.date(c.ends_at) }) : w.t('offer_from', { date: w.date(c.starts_at) }),
    ];
    return `<li part="offer"><span><strong>${esc(c.name)}</strong><br><span class="muted">${esc(what.filter(Boolean).join(' · '))}</span></span></li>`;
  });
  return section('offers', w.t('offers'), `<ul>${items.join('')}</ul>`);
}
