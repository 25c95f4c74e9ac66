// IANA time zones, as the runtime's zone database (ICU) knows them: the shop's `timezone`
// setting and the local days of its reports (docs/reports.md).

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let out = formatters.get(timeZone);
  if (out === undefined) {
    out = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric', hourCycle: 'h23' });
    formatters.set(timeZone, out);
  }
  return out;
}

const ZONES = new Set<string>([...Intl.supportedValuesOf('timeZone'), 'UTC']);

/**
 * Whether `name` is a zone of the runtime's database, by its name or an alias of it (ICU may
 * call Asia/Kolkata Asia/Calcutta). Offsets such as `+05:30` are not zones.
 */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    return ZONES.has(name) || ZONES.has(new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone);
  } catch {
    return false;
  }
}

/** The local day (days since 1970-01-01) of the instant `ms` in the zone. */
export function localDay(ms: number, timeZone: string): number {
  let year = 0;
  let month = 0;
  let day = 0;
  for (const part of formatterOf(timeZone).formatToParts(ms)) {
    if (part.type === 'year') year = Number(part.value);
    else if (part.type === 'month') month = Number(part.value);
    else if (part.type === 'day') day = Number(part.value);
  }
  return Date.UTC(year, month - 1, day) / DAY_MS;
}

/** A day number as YYYY-MM-DD, and back. */
export function dayDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export function dateDay(date: string): number {
  return Date.parse(`${date}T00:00:00Z`) / DAY_MS;
}
