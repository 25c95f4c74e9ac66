import { DAY_MS } from '../clock.js';

// Birthdays, in UTC: the day a birthday grant falls due. 29 February is celebrated on
// 28 February in other years.

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** 00:00 UTC of the birthday (`YYYY-MM-DD`) in `year`; null when the date is not one. */
export function birthdayIn(birthday: string, year: number): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(birthday);
  if (match === null) return null;
  const month = Number(match[2]);
  let day = Number(match[3]);
  if (month === 2 && day === 29 && !isLeap(year)) day = 28;
  const at = Date.UTC(year, month - 1, day);
  return new Date(at).getUTCMonth() === month - 1 ? at : null;
}

/**
 * When the next birthday grant falls due: the birthday this year if it is today or later,
 * else next year's, and never in a year already granted.
 */
export function nextBirthday(birthday: string, now: number, grantedYear: number | null): number | null {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  let year = new Date(now).getUTCFullYear();
  if (grantedYear !== null && year <= grantedYear) year = grantedYear + 1;
  const thisYear = birthdayIn(birthday, year);
  if (thisYear === null) return null;
  return thisYear >= today ? thisYear : birthdayIn(birthday, year + 1);
}

/** How long after the day a missed birthday is still granted (the server was down): a year. */
export const CATCH_UP_MS = 365 * DAY_MS;
