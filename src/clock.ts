/** Milliseconds since the epoch. Injected so tests can move time (points expiry). */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** A day in milliseconds (a UTC day: no leap seconds, no daylight saving). */
export const DAY_MS = 86_400_000;

/** Times in responses: UTC ISO 8601 with milliseconds. */
export function isoTime(ms: number): string;
export function isoTime(ms: number | null): string | null;
export function isoTime(ms: number | null): string | null {
  if (ms === null) return null;
  const time = Number(ms);
  // Date#toISOString dominated a page of records (two per row) and /me (an instant per upcoming
  // expiry, each on another day): the date is worked out by hand (dayPrefix), the time of day
  // too. Same output, years 1970 to 9999.
  if (!Number.isInteger(time) || time < 0 || time >= MAX_FAST_TIME) return new Date(time).toISOString();
  const day = Math.floor(time / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayPrefix = dayPrefix(day);
  }
  const inDay = time - day * DAY_MS;
  const hours = Math.floor(inDay / 3_600_000);
  const minutes = Math.floor(inDay / 60_000) % 60;
  const seconds = Math.floor(inDay / 1000) % 60;
  const millis = inDay % 1000;
  return `${lastDayPrefix}${hours < 10 ? '0' : ''}${hours}:${minutes < 10 ? '0' : ''}${minutes}:${seconds < 10 ? '0' : ''}${seconds}.${millis < 100 ? (millis < 10 ? '00' : '0') : ''}${millis}Z`;
}

const MAX_FAST_TIME = Date.UTC(10_000, 0, 1);
let lastDay = -1;
let lastDayPrefix = '';

/**
 * `YYYY-MM-DDT` of a day since the epoch (0 to 2 932 896), the proleptic Gregorian calendar's
 * date as toISOString writes it: H. Hinnant's civil_from_days, on eras of 400 years.
 */
function dayPrefix(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  // Months counted from March, so that February's leap day comes last.
  const m = Math.floor((5 * dayOfYear + 2) / 153);
  const date = dayOfYear - Math.floor((153 * m + 2) / 5) + 1;
  const month = m < 10 ? m + 3 : m - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${month < 10 ? '0' : ''}${month}-${date < 10 ? '0' : ''}${date}T`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * Epoch ms of an RFC 3339 time, or null when it is not one (or names a day that does not
 * exist, like 2026-02-31). Sub-millisecond digits are dropped.
 */
export function parseTime(text: string): number | null {
  const m = RFC3339.exec(text.trim());
  if (m === null) return null;
  const [, y, mo, d, h, mi, s, frac, sign, oh, om] = m;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps years 0–99 as written instead of mapping them to 19xx.
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  if (date.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  date.setUTCHours(Number(h), Number(mi), Number(s), frac ? Math.floor(Number(`0${frac}`) * 1000) : 0);
  let time = date.getTime();
  if (sign) time -= (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om ?? 0)) * 60_000;
  return Number.isFinite(time) ? time : null;
}
