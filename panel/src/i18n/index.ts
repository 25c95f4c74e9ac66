import { de } from './de.js';
import { en, type Strings } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { it } from './it.js';
import { nl } from './nl.js';

// The panel's built-in languages, one table each; the language is the element's `lang`, else the
// page's <html lang>, else English. Numbers, money and dates go through Intl in that locale.

export type { Strings };
export type Key = keyof Strings;
export type Vars = Record<string, string | number>;

export const TRANSLATIONS: Record<string, Strings> = { en, de, fr, es, it, nl };

export interface Words {
  /** The BCP 47 locale Intl formats with. */
  readonly locale: string;
  /** The string `key` with its `{name}`s filled in: text, not markup. */
  t(key: Key, vars?: Vars): string;
  points(n: number): string;
  number(n: number): string;
  money(amount: number, currency: string | null): string;
  /** An instant as a day (e.g. 14 Feb 2027). */
  date(iso: string): string;
  /** A birthday (YYYY-MM-DD) as a day and month. */
  birthday(day: string): string;
}

function localeOf(lang: string): string {
  try {
    return Intl.NumberFormat.supportedLocalesOf([lang])[0] ?? 'en';
  } catch {
    return 'en';
  }
}

/** The words of `lang` (a BCP 47 tag), with the merchant's `overrides` of any string. */
export function words(lang: string, overrides: Partial<Record<string, string>> = {}): Words {
  const locale = localeOf(lang || 'en');
  const table: Strings = { ...(TRANSLATIONS[locale.split('-')[0]!.toLowerCase()] ?? en) };
  for (const [key, value] of Object.entries(overrides)) if (key in table && typeof value === 'string') table[key as Key] = value;
  const plural = new Intl.PluralRules(locale);
  const numbers = new Intl.NumberFormat(locale);
  const days = new Intl.DateTimeFormat(locale, { year: 'numeric', month: 'short', day: 'numeric' });
  const birthdays = new Intl.DateTimeFormat(locale, { month: 'long', day: 'numeric', timeZone: 'UTC' });
  const fill = (template: string, vars: Vars) => template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
  const w: Words = {
    locale,
    t: (key, vars = {}) => fill(table[key], vars),
    points(n) {
      const [one, other = one] = table.points.split('|') as [string, string?];
      return fill(plural.select(n) === 'one' ? one : other, { n: numbers.format(n) });
    },
    number: (n) => numbers.format(n),
    money(amount, currency) {
      if (currency === null) return numbers.format(amount);
      try {
        return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(amount);
      } catch {
        return `${numbers.format(amount)} ${currency}`;
      }
    },
    date: (iso) => days.format(new Date(iso)),
    birthday: (day) => birthdays.format(new Date(`${day}T00:00:00Z`)),
  };
  return w;
}
