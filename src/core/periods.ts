import { localDay } from './time-zones.js';

// Calendar periods in a time zone (ways to earn's limits, earning/actions.ts): when the period
// holding an instant started, and when the next one starts. Days begin at local midnight, weeks
// on Monday (ISO 8601), months and years on their first day; exact in zones with half-hour
// offsets and across daylight-saving changes, and where a change skips midnight itself.

export type CalendarPeriod = 'lifetime' | 'year' | 'month' | 'week' | 'day';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(timeZone: string): Intl.DateTimeFormat {
  let out = formatters.get(timeZone);
  if (out === undefined) {
    out = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, out);
  }
  return out;
}

/** The zone's offset from UTC at the instant `ms`, in milliseconds (east positive). */
function offsetAt(ms: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of wallClock(timeZone).formatToParts(ms)) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The first instant of the local day `day` (days since 1970-01-01) in the zone. */
export function dayStart(day: number, timeZone: string): number {
  const midnight = day * DAY_MS;
  let at = midnight - offsetAt(midnight, timeZone);
  at = midnight - offsetAt(at, timeZone);
  // A change of offset at midnight: the day begins at the first instant that is on it.
  if (localDay(at, timeZone) < day) {
    at = midnight - offsetAt(at + 2 * HOUR_MS, timeZone);
    while (localDay(at, timeZone) < day) at += HOUR_MS / 4;
  }
  while (localDay(at - 1, timeZone) >= day) at -= HOUR_MS / 4;
  return at;
}

/** The local days on which the period holding `day` begins and the next one begins. */
function periodDays(period: Exclude<CalendarPeriod, 'lifetime'>, day: number): [number, number] {
  const date = new Date(day * DAY_MS);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  switch (period) {
    case 'day':
      return [day, day + 1];
    case 'week': {
      // 1970-01-01 was a Thursday: day + 3 counts from a Monday.
      const monday = day - ((((day + 3) % 7) + 7) % 7);
      return [monday, monday + 7];
    }
    case 'month':
      return [Date.UTC(year, month, 1) / DAY_MS, Date.UTC(year, month + 1, 1) / DAY_MS];
    case 'year':
      return [Date.UTC(year, 0, 1) / DAY_MS, Date.UTC(year + 1, 0, 1) / DAY_MS];
  }
}

/**
 * The period holding the instant `now` in the zone: its start (0 for a lifetime, which began
 * before anything) and the start of the next one (null for a lifetime, which has none).
 */
export function periodAt(period: CalendarPeriod, now: number, timeZone: string): { start: number; next: number | null } {
  if (period === 'lifetime') return { start: 0, next: null };
  const [first, next] = periodDays(period, localDay(now, timeZone));
  return { start: dayStart(first, timeZone), next: dayStart(next, timeZone) };
}
