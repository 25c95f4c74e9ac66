import type { components } from '@loyalty-api/client';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { hasNext } from '../../components/pager';
import { useClient } from '../../lib/api';

export type PointsEvent = components['schemas']['PointsEvent'];
export type Redemption = components['schemas']['Redemption'];

const PAGE = 50;

// Every query of one customer's page shares the key's head, so a change refreshes them all.
const keyOf = (identifier: string) => ['customer', identifier] as const;

export function useCustomer(identifier: string, eventsPage: number) {
  const client = useClient();
  const path = { customer_identifier: identifier };
  const customer = useQuery({
    queryKey: [...keyOf(identifier), 'record'],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/customers/{customer_identifier}', { params: { path }, signal })).data,
  });
  // Newest first: what support looks at.
  const events = useQuery({
    queryKey: [...keyOf(identifier), 'events', eventsPage],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const page = await client.GET('/merchant_api/v1/customers/{customer_identifier}/points_events', {
        params: { path, query: { 'pagination[page]': eventsPage, 'pagination[per_page]': PAGE, 'sort[order_type]': 'id', 'sort[order_direction]': 'desc' } },
        signal,
      });
      return { events: page.data, more: hasNext(page.links) };
    },
  });
  const redemptions = useQuery({
    queryKey: [...keyOf(identifier), 'redemptions'],
    queryFn: async ({ signal }) =>
      (
        await client.GET('/merchant_api/v1/customers/{customer_identifier}/redemptions', {
          params: { path, query: { 'pagination[per_page]': PAGE, 'sort[order_type]': 'id', 'sort[order_direction]': 'desc' } },
          signal,
        })
      ).data,
  });
  return { customer, events, redemptions };
}

/** The writes of a customer's page; each refreshes the page once it is done. */
export function useCustomerActions(identifier: string) {
  const client = useClient();
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: keyOf(identifier) });
  const reverse = useMutation({
    mutationFn: (id: number) => client.POST('/merchant_api/v1/points_events/{id}/reverse', { params: { path: { id } } }),
    // A refusal is read in its dialog, which a refresh could take away (the row would no longer offer it).
    onSuccess: refresh,
  });
  const markUsed = useMutation({
    mutationFn: (id: number) => client.POST('/merchant_api/v1/redemptions/{id}/use', { params: { path: { id } } }),
    onSettled: refresh,
  });
  const voidRedemption = useMutation({
    mutationFn: (id: number) => client.POST('/merchant_api/v1/redemptions/{id}/void', { params: { path: { id } } }),
    onSettled: refresh,
  });
  const adjust = useMutation({
    mutationFn: ({ points, credits, reason, key }: { points?: number; credits?: number; reason: string; key: string }) =>
      client.POST('/merchant_api/v1/points_events', {
        body: {
          customer_identifier: identifier,
          source: 'manual',
          ...(points === undefined ? {} : { points_amount: points }),
          ...(credits === undefined ? {} : { credits_amount: credits }),
          ...(reason === '' ? {} : { internal_note: reason }),
        },
        headers: { 'Idempotency-Key': key },
      }),
    onSettled: refresh,
  });
  return { reverse, markUsed, voidRedemption, adjust };
}

export type Lot = components['schemas']['Lot'];

/**
 * The customer's open lots in the order deductions use them (earliest expiry first, never
 * expiring last): one page of `perPage` from `page`.
 */
export function useLots(identifier: string, page: number, perPage: number) {
  const client = useClient();
  return useQuery({
    queryKey: [...keyOf(identifier), 'lots', page, perPage],
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) => {
      const lots = await client.GET('/merchant_api/v1/customers/{customer_identifier}/lots', {
        params: {
          path: { customer_identifier: identifier },
          query: { 'pagination[page]': page, 'pagination[per_page]': perPage, 'sort[order_type]': 'expires_at', 'sort[order_direction]': 'asc' },
        },
        signal,
      });
      return { lots: lots.data, more: hasNext(lots.links) };
    },
  });
}
