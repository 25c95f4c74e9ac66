import type { Key, Vars, Words } from './i18n/index.js';

// What the panel holds: the API's answers (only the fields it shows), and what the shopper is
// doing. Sections (sections/*.ts) turn a View into HTML.

export interface Me {
  points_balance: number;
  credits_balance: number;
  points_pending: number;
  vip_tier: { id: number; name: string } | null;
  vip_tier_progress: { points_earned: number; next_tier: { name: string; points_threshold: number } | null; points_needed: number };
  next_expiry: { points: number; credits: number; expires_at: string } | null;
  referral_code: string | null;
  birthday: string | null;
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
  order_remote_id: number | null;
}

export interface EarningRule {
  kind: string;
  points_per_unit: number | null;
  unit_amount: number | null;
  currency: string | null;
  points_amount: number | null;
}

export interface Campaign {
  name: string;
  status: string;
  starts_at: string;
  ends_at: string;
  multiplier: number | null;
  bonus_points: number | null;
  vip_tier_ids: number[];
}

/** A way to earn beyond orders (GET /me/ways_to_earn), with where the shopper is with it. */
export interface Way {
  id: number;
  kind: string;
  name: string;
  description: string | null;
  url: string | null;
  points_amount: number;
  credits_amount: number;
  claimable: boolean;
  completed: number;
  limit_count: number;
  available: boolean;
  available_at: string | null;
}

export interface Programme {
  shop: { name: string; currency: string | null };
  earning_rules: EarningRule[];
  vip_tiers: { id: number; name: string; points_threshold: number; earning_multiplier: number }[];
  campaigns: Campaign[];
}

export interface Redemption {
  id: number;
  reward: { name: string };
  code: string;
  status: string;
  expires_at: string | null;
  used_at: string | null;
  created_at: string;
}

export interface State {
  programme: Programme | null;
  me: Me | null;
  rewards: Reward[];
  /** The ways to earn beyond orders, with what the shopper has done. */
  ways: Way[];
  events: PointsEvent[];
  redemptions: Redemption[];
  /** The redemption just made: its code is shown on top. */
  redeemed: Redemption | null;
  /** The reward whose redemption waits for the shopper's confirmation. */
  confirm: number | null;
  /** What is being sent ('redeem:<id>', 'claim:<id>', 'birthday'), so its button waits. */
  busy: string | null;
  /** What went wrong, as the key of its words (so a change of language changes it too). */
  error: Key | null;
  /** The text last copied, so its button says so. */
  copied: string | null;
}

export interface View {
  state: State;
  me: Me;
  w: Words;
  /** The link a shopper shares for their referral code. */
  referralUrl(code: string): string;
}

export const esc = (value: unknown) => String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A string of the shopper's language as HTML text. */
export const say = (w: Words, key: Key, vars?: Vars) => esc(w.t(key, vars));

/** A "Copy" button for `text`; `label` names what it copies when "Copy" alone would not. */
export function copyButton(v: View, text: string, caption: Key, label?: string): string {
  const name = label === undefined ? '' : ` aria-label="${esc(label)}"`;
  return `<button type="button" part="copy-button" data-action="copy" data-text="${esc(text)}"${name}>${say(v.w, v.state.copied === text ? 'copied' : caption)}</button>`;
}

/** A section with a heading that names it (a landmark a screen reader can jump to). */
export const section = (id: string, title: string, body: string, part = id) =>
  `<section aria-labelledby="h-${id}" part="${part}"><h2 id="h-${id}">${esc(title)}</h2>${body}</section>`;
