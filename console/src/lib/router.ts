import { useEffect, useState } from 'react';
import { parseAreaRoute, type AreaRoute } from './areas';

// Routes live in the fragment (`#/customers/42`): the server serves one index.html for the
// console whatever the route, and a reload keeps the page.

export type Route = { page: 'overview' } | { page: 'customers' } | { page: 'customer'; identifier: string } | AreaRoute;

export function parseRoute(hash: string): Route {
  const area = parseAreaRoute(hash);
  if (area) return area;
  const customer = /^#\/customers\/([^/]+)$/.exec(hash);
  if (customer?.[1]) return { page: 'customer', identifier: decodeURIComponent(customer[1]) };
  if (hash === '#/customers') return { page: 'customers' };
  return { page: 'overview' };
}

export const customerHref = (identifier: string | number): string => `#/customers/${encodeURIComponent(String(identifier))}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const follow = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  return route;
}
