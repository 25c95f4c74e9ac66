import { wayItems, type MyWay } from './ways-to-earn.js';

// What the panel shows, as HTML built from the API's answers. Every value from the API passes
// through esc(): a reward's name or a note is text, never markup.

export interface Me {
  points_balance: number;
  credits_balance: number;
  vip_tier: { name: string } | null;
  vip_tier_progress: { points_earned: number; next_tier: { name: string; points_threshold: number } | null; points_needed: number };
  next_expiry: { points: number; credits: number; expires_at: string } | null;
  referral_code: string | null;
}

export interface Reward {
  id: number;
  name: string;
  points_price: number;
  affordable: boolean;
  points_needed: number;
  redemptions_left: number | null;
}

export interface PointsEvent {
  id: number;
  source: string;
  points_amount: number;
  external_note: string | null;
  applied_at: string;
}

export interface EarningRule {
  kind: string;
  points_per_unit: number | null;
  unit_amount: number | null;
  currency: string | null;
  points_amount: number | null;
}

export interface Redeemed {
  reward: { name: string };
  code: string;
}

const esc = (value: unknown) => String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const number = (n: number) => n.toLocaleString();
const day = (iso: string) => new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const points = (n: number) => `${number(n)} point${Math.abs(n) === 1 ? '' : 's'}`;

function summary(me: Me): string {
  const progress = me.vip_tier_progress;
  const next = progress.next_tier;
  const tier = me.vip_tier === null ? 'No tier yet' : `${esc(me.vip_tier.name)} member`;
  const bar =
    next === null
      ? ''
      : `<progress part="progress" max="${next.points_threshold}" value="${Math.min(progress.points_earned, next.points_threshold)}" aria-label="Progress to ${esc(next.name)}"></progress>
         <p class="muted">${points(progress.points_needed)} to ${esc(next.name)}</p>`;
  const expiry =
    me.next_expiry === null ? '' : `<p class="muted" part="expiry">${points(me.next_expiry.points)} expire on ${day(me.next_expiry.expires_at)}</p>`;
  const credits = me.credits_balance > 0 ? `<p class="muted">${number(me.credits_balance)} in store credit</p>` : '';
  return `<section aria-label="Your balance"><p class="balance" part="balance">${points(me.points_balance)}</p>${credits}<p part="tier">${tier}</p>${bar}${expiry}</section>`;
}

function rewards(list: readonly Reward[], busy: number | null): string {
  if (list.length === 0) return '<h2>Rewards</h2><p class="muted">No rewards yet.</p>';
  const items = list.map((r) => {
    const left = r.redemptions_left === 0;
    const why = left ? 'Already redeemed' : r.affordable ? '' : `${points(r.points_needed)} more needed`;
    return `<li part="reward"><span><strong>${esc(r.name)}</strong><br><span class="muted">${points(r.points_price)}${why ? ` · ${why}` : ''}</span></span>
      <button part="redeem-button" data-reward="${r.id}" aria-label="Redeem ${esc(r.name)}" ${r.affordable && !left && busy === null ? '' : 'disabled'}>${busy === r.id ? 'Redeeming…' : 'Redeem'}</button></li>`;
  });
  return `<h2>Rewards</h2><ul aria-label="Rewards">${items.join('')}</ul>`;
}

function history(events: readonly PointsEvent[]): string {
  if (events.length === 0) return '';
  const label = (s: string) => s.replace(/_/g, ' ');
  const rows = events.map(
    (e) => `<li><span>${esc(e.external_note ?? label(e.source))}<br><span class="muted">${day(e.applied_at)}</span></span>
      <span class="${e.points_amount > 0 ? 'plus' : ''}">${e.points_amount > 0 ? '+' : ''}${number(e.points_amount)}</span></li>`,
  );
  return `<h2>History</h2><ul aria-label="History">${rows.join('')}</ul>`;
}

const RULE_WORDS: Record<string, string> = {
  signup: 'when you sign up',
  birthday: 'on your birthday',
  referral_referrer: 'for each friend you refer',
  referral_friend: 'when a friend refers you',
  subscription_billing: 'for each subscription payment',
};

function earning(rules: readonly EarningRule[], ways: readonly string[]): string {
  const items = rules.flatMap((r) => {
    if (r.kind === 'order' && r.points_per_unit !== null)
      return [`${points(r.points_per_unit)} per ${number(r.unit_amount ?? 1)} ${esc(r.currency ?? '')} spent`];
    const when = RULE_WORDS[r.kind];
    return when !== undefined && r.points_amount !== null ? [`${points(r.points_amount)} ${when}`] : [];
  });
  items.push(...ways);
  return items.length === 0 ? '' : `<h2>Ways to earn</h2><ul aria-label="Ways to earn">${items.map((i) => `<li part="way">${i}</li>`).join('')}</ul>`;
}

export interface State {
  rules: EarningRule[];
  ways: MyWay[];
  /** The way to earn being claimed. */
  claiming: number | null;
  me: Me | null;
  rewards: Reward[];
  events: PointsEvent[];
  redeemed: Redeemed | null;
  busy: number | null;
  error: string | null;
  copied: boolean;
}

export function render(state: State): string {
  const error = `<p role="alert" part="error">${state.error === null ? '' : esc(state.error)}</p>`;
  if (state.me === null) return `${error}${state.error === null ? '<p class="muted">Loading your rewards…</p>' : ''}`;
  const code =
    state.redeemed === null
      ? ''
      : `<section aria-label="Your code" part="code-section"><h2>Your code for ${esc(state.redeemed.reward.name)}</h2>
         <p><span class="code" part="code">${esc(state.redeemed.code)}</span> <button part="copy-button" data-copy>${state.copied ? 'Copied' : 'Copy'}</button></p></section>`;
  const referral =
    state.me.referral_code === null
      ? ''
      : `<h2>Refer a friend</h2><p>Your referral code: <span class="code" part="referral-code">${esc(state.me.referral_code)}</span></p>`;
  return `${error}${summary(state.me)}<div aria-live="polite">${code}</div>${rewards(state.rewards, state.busy)}${earning(state.rules, wayItems(state.ways, state.claiming, { esc, points, day, number }))}${history(state.events)}${referral}`;
}
