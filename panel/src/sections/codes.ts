import { copyButton, esc, say, section, type Redemption, type View } from '../model.js';

// Codes the shopper got for their points: the one just redeemed on top, with how to use it, and
// the latest ones below, so that a code is never lost on a reload.

const usable = (r: Redemption, now: number) => r.status === 'issued' && (r.expires_at === null || Date.parse(r.expires_at) > now);

/** Whether a code can still be used, and until when. */
function validity({ w }: View, r: Redemption, now: number): string {
  if (r.status === 'voided') return say(w, 'voided');
  if (r.status === 'used') return r.used_at === null ? say(w, 'used_on', { date: w.date(r.created_at) }) : say(w, 'used_on', { date: w.date(r.used_at) });
  if (r.expires_at === null) return say(w, 'no_expiry');
  return usable(r, now) ? say(w, 'valid_until', { date: w.date(r.expires_at) }) : say(w, 'expired_on', { date: w.date(r.expires_at) });
}

/** The code just redeemed, with its expiry and how to use it. */
export function freshCode(v: View): string {
  const r = v.state.redeemed;
  if (r === null) return '<div aria-live="polite"></div>';
  const body = `<p><span class="code" part="code">${esc(r.code)}</span> ${copyButton(v, r.code, 'copy', v.w.t('copy_code', { name: r.reward.name }))}</p>
    <p part="code-expiry">${validity(v, r, Date.now())}</p><p class="muted" part="code-how">${say(v.w, 'how_to_use')}</p>`;
  return `<div aria-live="polite">${section('code', v.w.t('code_for', { name: r.reward.name }), body, 'code-section')}</div>`;
}

/** The shopper's latest codes (the one just redeemed is shown above). */
export function codes(v: View): string {
  const now = Date.now();
  const list = v.state.redemptions.filter((r) => r.id !== v.state.redeemed?.id);
  if (list.length === 0) return '';
  const items = list.map(
    (
      r,
    ) => `<li part="redemption"><span><strong>${esc(r.reward.name)}</strong><br><span class="code">${esc(r.code)}</span><br><span class="muted">${validity(v, r, now)}</span></span>
      ${usable(r, now) ? copyButton(v, r.code, 'copy', v.w.t('copy_code', { name: r.reward.name })) : ''}</li>`,
  );
  return section('codes', v.w.t('codes'), `<ul>${items.join('')}</ul><p class="muted">${say(v.w, 'how_to_use')}</p>`);
}
