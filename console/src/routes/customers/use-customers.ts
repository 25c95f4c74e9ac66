import type { components } from '@loyalty-api/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { hasNext, offsetTotal } from '../../components/pager';
import { useClient } from '../../lib/api';

export type Customer = components['schemas']['Customer'];
/** What the API sorts customers by (offset mode). */
export type CustomerSort = 'id' | 'created_at' | 'updated_at' | 'points_balance';

export interface CustomerQuery {
  /** Words that start a name, an e-mail address or a remote_id; '' for every customer. */
  search: string;
  sort: CustomerSort;
  direction: 'asc' | 'desc';
  page: number;
}

export const PER_PAGE = 25;

/** One page of customers (the API's `query` search, or every customer), sorted, and how many there are in all. */
export function useCustomers(query: CustomerQuery) {
  const client = useClient();
  return useQuery({
    queryKey: ['customers', query],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }): Promise<{ customers: Customer[]; more: boolean; total: number }> => {
      const search = query.search.trim();
      const read = (page: number) =>
        client.GET('/merchant_api/v1/customers', {
          params: {
            query: {
              ...(search === '' ? {} : { query: search }),
              'pagination[page]': page,
              'pagination[per_page]': PER_PAGE,
              'sort[order_type]': query.sort,
              'sort[order_direction]': query.direction,
            },
          },
          signal,
        });
      const shown = await read(query.page);
      const total = await offsetTotal(
        { page: query.page, perPage: PER_PAGE, rows: shown.data.length, links: shown.links },
        async (page) => (await read(page)).data.length,
      );
      return { customers: shown.data, more: hasNext(shown.links), total };
    },
  });
}
