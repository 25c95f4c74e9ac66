import type { components } from '@loyalty-api/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useClient } from '../../lib/api';

export type ReportPeriod = components['schemas']['PointsReportPeriod'];
export type ProgrammeReport = components['schemas']['ProgrammeReport'];

/** The ranges the Overview offers, in days up to today. */
export const RANGES = [30, 90, 365] as const;
export type Range = (typeof RANGES)[number];

const DAY_MS = 86_400_000;

/** Today in the shop's time zone (the report's days are the shop's), and the day `days - 1` before it, as YYYY-MM-DD. */
export function rangeOf(timeZone: string, days: number, now = Date.now()): { from: string; to: string } {
  const to = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  const from = new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * DAY_MS).toISOString().slice(0, 10);
  return { from, to };
}

/** The points report per day over the range, and the programme report. */
export function useOverview(days: Range) {
  const client = useClient();
  const shop = useQuery({
    queryKey: ['shop'],
    // Read at sign-in; settings change seldom.
    staleTime: Infinity,
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/shop', { signal })).data,
  });
  const timeZone = shop.data?.timezone;
  const points = useQuery({
    queryKey: ['reports', 'points', timeZone, days],
    enabled: timeZone !== undefined,
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) =>
      (await client.GET('/merchant_api/v1/reports/points', { params: { query: { ...rangeOf(timeZone!, days), interval: 'day' } }, signal })).data,
  });
  const programme = useQuery({
    queryKey: ['reports', 'programme'],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/reports/programme', { signal })).data,
  });
  return { shop, points, programme };
}
