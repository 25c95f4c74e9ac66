// What an API token may do (docs/access.md): `read` (every GET of the resources below),
// `<resource>:read`, `<resource>:write` (which reads the resource too), and `admin` (everything,
// the default of tokens made by the CLI). Each route declares the one scope it needs
// (http/scopes.ts); tokens, and the audit log, need `admin`.

export const SCOPE_RESOURCES = [
  'customers',
  'orders',
  'subscriptions',
  'points_events',
  'redemptions',
  'rewards',
  'vip_tiers',
  'referrals',
  'campaigns',
  'earning_rules',
  'webhooks',
  'storefront_keys',
  'connections',
  'reports',
  'shop',
] as const;

export type ScopeResource = (typeof SCOPE_RESOURCES)[number];

/** A scope a route may need: one resource's reads or writes, or `admin`. */
export type RouteScope = `${ScopeResource}:${'read' | 'write'}` | 'admin';

/** A scope a token may hold. */
export type Scope = RouteScope | 'read';

/** Every scope, in the order the documentation lists them. */
export const SCOPES: readonly Scope[] = ['admin', 'read', ...SCOPE_RESOURCES.flatMap((r) => [`${r}:read`, `${r}:write`] as const)];

const KNOWN: ReadonlySet<string> = new Set(SCOPES);

export const isScope = (value: string): value is Scope => KNOWN.has(value);

/** Whether a token holding `held` may do what needs `needed`. */
export function allows(held: readonly Scope[], needed: RouteScope): boolean {
  if (held.includes('admin') || held.includes(needed)) return true;
  if (needed === 'admin') return false;
  if (!needed.endsWith(':read')) return false;
  return held.includes('read') || held.includes(`${needed.slice(0, -':read'.length)}:write` as Scope);
}

/** The scopes in `wanted` that `held` does not cover: a token may hand on no more than it holds. */
export function beyond(held: readonly Scope[], wanted: readonly Scope[]): Scope[] {
  return wanted.filter((scope) => {
    if (scope === 'read') return !held.includes('admin') && !held.includes('read');
    return !allows(held, scope);
  });
}

/** Scopes as stored: space-separated. */
export const storedScopes = (scopes: readonly Scope[]): string => [...new Set(scopes)].join(' ');

export const parseStoredScopes = (text: string): Scope[] => text.split(' ').filter(isScope);
