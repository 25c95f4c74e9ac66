import { copyButton, esc, say, section, type View } from '../model.js';

/** The referral code, a link to share with a "Copy link" button, and what a referral brings each side. */
export function referral(v: View): string {
  const { state, me, w } = v;
  const code = me.referral_code;
  if (code === null) return '';
  const amount = (kind: string) => state.programme?.earning_rules.find((r) => r.kind === kind)?.points_amount ?? null;
  const you = amount('referral_referrer');
  const friend = amount('referral_friend');
  const why = [
    you === null ? w.t('refer_share') : w.t('refer_you', { points: w.points(you) }),
    friend === null ? '' : w.t('refer_friend', { points: w.points(friend) }),
  ].join(' ');
  const link = v.referralUrl(code);
  return section(
    'refer',
    w.t('refer'),
    `<p>${esc(why.trim())}</p><p class="row"><span>${say(w, 'referral_link')}: <a href="${esc(link)}" part="referral-link">${esc(link)}</a></span> ${copyButton(v, link, 'copy_link')}</p>
    <p>${say(w, 'referral_code', { code })}</p>`,
  );
}
