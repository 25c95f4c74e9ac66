import { LoyaltyApiError, type components } from '@loyalty-api/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { hasNext } from '../../components/pager';
import { useClient } from '../../lib/api';

export type Customer = components['schemas']['Customer'];
/** What the API sorts customers by (offset mode). */
export type CustomerSort = 'id' | 'created_at' | 'updated_at' | 'points_balance';

export interface CustomerQuery {
  /** An e-mail address, a remote_id, or '' for every customer. */
  search: string;
  sort: CustomerSort;
  direction: 'asc' | 'desc';
  page: number;
}

export const PER_PAGE = 25;

/** One page of customers: a search by e-mail (the list's filter) or by remote_id (the record), or the sorted list. */
export function useCustomers(query: CustomerQuery) {
  const client = useClient();
  return useQuery({
    queryKey: ['customers', query],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }): Promise<{ customers: Customer[]; more: boolean }> => {
      const search = query.search.trim();
      if (/^\d+$/.test(search)) {
        try {
          const { data } = await client.GET('/merchant_api/v1/customers/{customer_identifier}', { params: { path: { customer_identifier: search } }, signal });
          return { customers: [data], more: false };
        } catch (error) {
          if (error instanceof LoyaltyApiError && error.code === 'not_found') return { customers: [], more: false };
          throw error;
        }
      }
      const page = await client.GET('/merchant_api/v1/customers', {
        params: {
          query: {
            ...(search === '' ? {} : { email: search }),
            'pagination[page]': query.page,
            'pagination[per_page]': PER_PAGE,
            'sort[order_type]': query.sort,
            'sort[order_direction]': query.direction,
          },
        },
        signal,
      });
      return { customers: page.data, more: hasNext(page.links) };
    },
  });
}
