import { useQuery } from '@tanstack/react-query';
import { useClient } from './api';

/** The shop as read at sign-in (settings change seldom; the settings page updates it): its time zone, its currency. */
export function useShop() {
  const client = useClient();
  return useQuery({
    queryKey: ['shop'],
    staleTime: Infinity,
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/shop', { signal })).data,
  });
}

/** What store credit is counted in: the shop's currency, or plain "credit" when it has none. */
export const creditUnit = (shop: { currency: string | null } | undefined): string => shop?.currency ?? 'credit';
