import type { Words } from './i18n/index.js';
import { say, type State, type View } from './model.js';
import { account } from './sections/account.js';
import { birthday } from './sections/birthday.js';
import { codes, freshCode } from './sections/codes.js';
import { earning } from './sections/earning.js';
import { history } from './sections/history.js';
import { offers } from './sections/offers.js';
import { referral } from './sections/referral.js';
import { confirmDialog, rewards } from './sections/rewards.js';
import { tiers } from './sections/tiers.js';

// What the panel shows, as HTML built from the API's answers: the sections below, in order, each
// a function of the View that answers '' when it has nothing to show. A new section is a file in
// sections/ and a line here. Every value from the API passes through esc(): a reward's name or a
// note is text, never markup.

export type { State } from './model.js';

const SECTIONS: readonly ((view: View) => string)[] = [account, offers, freshCode, rewards, codes, earning, tiers, birthday, referral, history, confirmDialog];

export function render(state: State, w: Words, referralUrl: (code: string) => string): string {
  const error = `<p role="alert" part="error">${state.error === null ? '' : say(w, state.error)}</p>`;
  if (state.me === null) return `${error}${state.error === null ? `<p class="muted">${say(w, 'loading')}</p>` : ''}`;
  const view: View = { state, me: state.me, w, referralUrl };
  return error + SECTIONS.map((s) => s(view)).join('');
}
