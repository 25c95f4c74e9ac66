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
  // Date#toISOString dominates a page of records (two per row); the date part of the last day
  // seen is kept, the time of day is formatted by hand. Same output, years 1970 to 9999.
  if (!Number.isInteger(time) || time < 0 || time >= MAX_FAST_TIME) return new Date(time).toISOString();
  const day = Math.floor(time / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayPrefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
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
