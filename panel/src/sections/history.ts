import type { Key } from '../i18n/index.js';
import { esc, section, type PointsEvent, type View } from '../model.js';

// The latest points events in words a shopper understands: never a source's internal name.

const SOURCE_WORDS: Record<string, Key> = {
  signup: 'src_signup',
  birthday: 'src_birthday',
  referral_complete: 'src_referral',
  review: 'src_review',
  import: 'src_import',
  expiration: 'src_expiration',
  reward_redemption: 'src_redemption',
  subscription_billing: 'src_subscription',
  custom_action: 'src_action',
  visit_url: 'src_action',
};

function what({ w }: View, e: PointsEvent): string {
  const order = e.order_remote_id;
  if (e.source === 'order') return order === null ? w.t('src_order_any') : w.t('src_order', { order });
  if (e.source === 'refund') return order === null ? w.t('src_refund_any') : w.t('src_refund', { order });
  if (/_(follow|like|share)$/.test(e.source)) return w.t('src_social');
  const key = SOURCE_WORDS[e.source];
  if (key !== undefined) return w.t(key);
  // manual, reversal, and any source not named above: by whether points came or went.
  if (e.source === 'reversal') return w.t(e.points_amount >= 0 ? 'src_returned' : 'src_taken');
  return w.t(e.points_amount >= 0 ? 'src_added' : 'src_removed');
}

export function history(v: View): string {
  const events = v.state.events;
  if (events.length === 0) return '';
  const rows = events.map((e) => {
    const note = e.external_note === null || e.external_note === '' ? '' : `<br><span class="muted">${esc(e.external_note)}</span>`;
    return `<li part="history-item"><span>${esc(what(v, e))}${note}<br><span class="muted">${esc(v.w.date(e.applied_at))}</span></span>
      <span class="${e.points_amount > 0 ? 'plus' : ''}">${e.points_amount > 0 ? '+' : ''}${esc(v.w.number(e.points_amount))}</span></li>`;
  });
  return section('history', v.w.t('history'), `<ul>${rows.join('')}</ul>`);
}
