import type { components } from '@loyalty-api/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useClient } from '../../lib/api';
import { useShop } from '../../lib/shop';

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

/** The `days` days before a range: what the Overview compares it with. */
export function previousRange(range: { from: string }, days: number): { from: string; to: string } {
  const start = Date.parse(`${range.from}T00:00:00Z`);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: day(start - days * DAY_MS), to: day(start - DAY_MS) };
}

/** The points report per day over the range and over the one before it, and the programme report. */
export function useOverview(days: Range) {
  const client = useClient();
  const shop = useShop();
  const timeZone = shop.data?.timezone;
  const points = useQuery({
    queryKey: ['reports', 'points', timeZone, days],
    enabled: timeZone !== undefined,
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) =>
      (await client.GET('/merchant_api/v1/reports/points', { params: { query: { ...rangeOf(timeZone!, days), interval: 'day' } }, signal })).data,
  });
  const previous = useQuery({
    queryKey: ['reports', 'points', timeZone, days, 'previous'],
    enabled: timeZone !== undefined,
    placeholderData: keepPreviousData,
    queryFn: async ({ signal }) =>
      (
        await client.GET('/merchant_api/v1/reports/points', {
          params: { query: { ...previousRange(rangeOf(timeZone!, days), days), interval: 'day' } },
          signal,
        })
      ).data,
  });
  const programme = useQuery({
    queryKey: ['reports', 'programme'],
    queryFn: async ({ signal }) => (await client.GET('/merchant_api/v1/reports/programme', { signal })).data,
  });
  return { shop, points, previous, programme };
}
