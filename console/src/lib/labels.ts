import type { components } from '@loyalty-api/client';

// The API's names (`fixed_amount_discount`, `reward_redemption`) in the words the console shows
// them in: the API's values stay what forms send and tests compare; only their text changes.

type Schemas = components['schemas'];

export const RULE_KINDS: Record<Schemas['EarningRule']['kind'], string> = {
  order: 'Orders',
  signup: 'Signing up',
  birthday: 'Birthday',
  referral_referrer: 'Referring a friend',
  referral_friend: 'Being referred',
  subscription_billing: 'Subscription payments',
  custom_action: 'Custom action',
  visit_url: 'Visiting a page',
};

export const REWARD_KINDS: Record<Schemas['Reward']['kind'], string> = {
  fixed_amount_discount: 'Amount off',
  percentage_discount: 'Percentage off',
  free_shipping: 'Free shipping',
  free_product: 'Free product',
};

export const EVENT_SOURCES: Record<Schemas['PointsEvent']['source'], string> = {
  manual: 'Adjustment',
  custom_action: 'Custom action',
  visit_url: 'Visited a page',
  referral_complete: 'Referral',
  instagram_follow: 'Instagram follow',
  tiktok_follow: 'TikTok follow',
  facebook_like: 'Facebook like',
  facebook_share: 'Facebook share',
  twitter_follow: 'X follow',
  twitter_share: 'X share',
  order: 'Order',
  refund: 'Refund',
  signup: 'Sign-up',
  birthday: 'Birthday',
  review: 'Review',
  import: 'Import',
  expiration: 'Expiry',
  reversal: 'Reversal',
  reward_redemption: 'Reward redeemed',
  subscription_billing: 'Subscription payment',
};

export const REDEMPTION_STATUSES: Record<Schemas['Redemption']['status'], string> = {
  issued: 'Issued',
  used: 'Used',
  voided: 'Voided',
};

export const REFERRAL_STATUSES: Record<Schemas['Referral']['status'], string> = {
  pending: 'Pending',
  completed: 'Completed',
  cancelled: 'Cancelled',
};

export const CAMPAIGN_STATUSES: Record<Schemas['Campaign']['status'], string> = {
  scheduled: 'Scheduled',
  active: 'Running',
  ended: 'Ended',
  cancelled: 'Cancelled',
};

/** An option list of a select from a table of words: the API's value, shown as its words. */
export const optionsOf = <K extends string>(words: Record<K, string>) => (Object.entries(words) as [K, string][]).map(([value, label]) => ({ value, label }));

/** The API's abbreviations, as they are written in words. */
const ABBREVIATIONS: Readonly<Record<string, string>> = { api: 'API', vip: 'VIP', id: 'ID', ids: 'IDs', url: 'URL', urls: 'URLs' };

/** A name of the API's that has no table here (`earning_rule`, `api_token.created`), in words: "Earning rule", "API token created". */
export function words(name: string): string {
  const text = name
    .replace(/[._]+/g, ' ')
    .trim()
    .replace(/[a-z]+/gi, (word) => ABBREVIATIONS[word.toLowerCase()] ?? word);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** One of the tables' words for a value, or the value in words when it has none. */
export const labelOf = (table: Readonly<Record<string, string>>, value: unknown): string => table[String(value)] ?? words(String(value));
