// The routes of the programme's pages, webhooks, referrals, storefront keys, API tokens and the
// audit log (`#/programme/rewards`, `#/webhooks/3`), parsed apart from the customers' so each
// area keeps its own file.

export const PROGRAMME_SECTIONS = [
  { slug: 'earning-rules', label: 'Earning rules' },
  { slug: 'rewards', label: 'Rewards' },
  { slug: 'vip-tiers', label: 'VIP tiers' },
  { slug: 'campaigns', label: 'Campaigns' },
  { slug: 'settings', label: 'Shop settings' },
] as const;

export type ProgrammeSection = (typeof PROGRAMME_SECTIONS)[number]['slug'];

export type AreaRoute =
  | { page: 'programme'; section: ProgrammeSection }
  | { page: 'webhooks' }
  | { page: 'webhook'; id: number }
  | { page: 'connections' }
  | { page: 'connection'; id: number }
  | { page: 'referrals' }
  | { page: 'storefront-keys' }
  | { page: 'api-tokens' }
  | { page: 'audit-log' };

const AREA_PAGES: readonly string[] = [
  'programme',
  'webhooks',
  'webhook',
  'connections',
  'connection',
  'referrals',
  'storefront-keys',
  'api-tokens',
  'audit-log',
] satisfies AreaRoute['page'][];

export const isAreaRoute = (route: { page: string }): route is AreaRoute => AREA_PAGES.includes(route.page);

/** The area a fragment names, or null when it names none of these. */
export function parseAreaRoute(hash: string): AreaRoute | null {
  const programme = /^#\/programme(?:\/([a-z-]+))?$/.exec(hash);
  if (programme) {
    const section = PROGRAMME_SECTIONS.find((s) => s.slug === programme[1])?.slug ?? 'earning-rules';
    return { page: 'programme', section };
  }
  const webhook = /^#\/webhooks\/(\d+)$/.exec(hash);
  if (webhook?.[1]) return { page: 'webhook', id: Number(webhook[1]) };
  if (hash === '#/webhooks') return { page: 'webhooks' };
  const connection = /^#\/connections\/(\d+)$/.exec(hash);
  if (connection?.[1]) return { page: 'connection', id: Number(connection[1]) };
  if (hash === '#/connections') return { page: 'connections' };
  if (hash === '#/referrals') return { page: 'referrals' };
  if (hash === '#/storefront-keys') return { page: 'storefront-keys' };
  if (hash === '#/api-tokens') return { page: 'api-tokens' };
  if (hash === '#/audit-log') return { page: 'audit-log' };
  return null;
}

/** The console's navigation to these areas: label, address, and the pages it is current on. */
export const AREA_LINKS = [
  { label: 'Programme', href: '#/programme', pages: ['programme'] },
  { label: 'Webhooks', href: '#/webhooks', pages: ['webhooks', 'webhook'] },
  { label: 'Connections', href: '#/connections', pages: ['connections', 'connection'] },
  { label: 'Referrals', href: '#/referrals', pages: ['referrals'] },
  { label: 'Storefront keys', href: '#/storefront-keys', pages: ['storefront-keys'] },
  { label: 'API tokens', href: '#/api-tokens', pages: ['api-tokens'] },
  { label: 'Audit log', href: '#/audit-log', pages: ['audit-log'] },
] as const;

export const webhookHref = (id: number): string => `#/webhooks/${id}`;
export const connectionHref = (id: number): string => `#/connections/${id}`;
