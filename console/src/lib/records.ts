import type { LoyaltyClient } from '@loyalty-api/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';

// The programme's records (earning rules, rewards, tiers, webhooks, referrals, storefront
// keys) share one shape of routes: a list in cursor mode, POST to create, PATCH and DELETE by
// id. The pages that serve them from one description (record-section.tsx) reach them through
// this one untyped view of the typed client; every other call stays typed.

export type Row = { id: number } & Record<string, unknown>;
export type Body = Record<string, unknown>;

/** A page of a list; in cursor mode its links carry `next_since_id` (null on the last page). */
export interface CursorPage<T> {
  data: T[];
  links: object;
}

const nextSinceId = (links: object | undefined): number | null =>
  links && 'next_since_id' in links && typeof links.next_since_id === 'number' ? links.next_since_id : null;

type Loose = Record<'GET' | 'POST' | 'PATCH' | 'DELETE', (path: string, init?: object) => Promise<unknown>>;

export const PAGE_SIZE = 25;

/** The list, create, update and delete of a record path (`/merchant_api/v1/rewards`). */
export function recordApi(client: LoyaltyClient, path: string) {
  const loose = client as unknown as Loose;
  const written = (key: string) => ({ headers: { 'Idempotency-Key': key } });
  return {
    page: (since: number, signal: AbortSignal, query: Record<string, string> = {}) =>
      loose.GET(path, { params: { query: { ...query, 'pagination[since_id]': since, 'pagination[limit]': PAGE_SIZE } }, signal }) as Promise<CursorPage<Row>>,
    /** A list the API answers whole (API tokens): one page without links. */
    all: async (signal: AbortSignal): Promise<CursorPage<Row>> => ({ data: ((await loose.GET(path, { signal })) as { data: Row[] }).data, links: {} }),
    create: async (body: Body, key: string) => ((await loose.POST(path, { body, ...written(key) })) as { data: Row }).data,
    update: async (id: number, body: Body, key: string) =>
      ((await loose.PATCH(`${path}/{id}`, { params: { path: { id } }, body, ...written(key) })) as { data: Row }).data,
    remove: (id: number) => loose.DELETE(`${path}/{id}`, { params: { path: { id } } }),
    action: (id: number, action: string) => loose.POST(`${path}/{id}/${action}`, { params: { path: { id } } }),
  };
}

/**
 * One page of a list in the API's cursor mode: "Next page" follows `next_since_id`, "Previous
 * page" goes back along the cursors already seen (the mode has no way back of its own).
 */
export function useCursorList<T>(key: readonly unknown[], load: (since: number, signal: AbortSignal) => Promise<CursorPage<T>>) {
  const [cursors, setCursors] = useState<number[]>([0]);
  const since = cursors[cursors.length - 1] ?? 0;
  const query = useQuery({ queryKey: [...key, 'since', since], placeholderData: keepPreviousData, queryFn: ({ signal }) => load(since, signal) });
  const next = nextSinceId(query.data?.links);
  const onPage = (page: number) =>
    setCursors((c) => {
      if (page <= c.length) return c.slice(0, Math.max(1, page));
      return next === null ? c : [...c, next];
    });
  return { query, page: cursors.length, more: next !== null, onPage };
}
