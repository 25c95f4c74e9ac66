import { describe, expect, it } from 'vitest';
import { DAY_MS, isoTime } from '../../src/clock.js';

// isoTime writes dates by hand (src/clock.ts): it must write what Date#toISOString writes.

describe('isoTime', () => {
  it('writes every day from 1970 to 2100, and every 11th to 9999, as toISOString does, at varied times of day', () => {
    const last = Math.floor(Date.UTC(10_000, 0, 1) / DAY_MS) - 1;
    const dense = Math.floor(Date.UTC(2101, 0, 1) / DAY_MS);
    const wrong: string[] = [];
    for (let day = 0; day <= last; day += day < dense ? 1 : 11) {
      // A time of day that moves through hours, minutes, seconds and milliseconds.
      const time = day * DAY_MS + ((day * 7_919_993) % DAY_MS);
      const expected = new Date(time).toISOString();
      if (isoTime(time) !== expected) wrong.push(expected);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it('writes the edges of days, leap days and centuries, in any order', () => {
    const times = [
      0,
      DAY_MS - 1,
      Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2100, 1, 28, 12),
      Date.UTC(2100, 2, 1),
      Date.UTC(2400, 1, 29, 0, 0, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(1999, 11, 31, 23, 59, 59, 10),
    ];
    for (const time of [...times, ...times.reverse(), Date.UTC(9999, 11, 31)]) expect(isoTime(time)).toBe(new Date(time).toISOString());
  });

  it('leaves times outside 1970 to 9999, and fractions, to toISOString; null stays null', () => {
    for (const time of [-1, -DAY_MS * 400, Date.UTC(10_000, 0, 1), Date.UTC(12_345, 5, 6), 1.5]) expect(isoTime(time)).toBe(new Date(time).toISOString());
    expect(isoTime(null)).toBeNull();
  });
});
