const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const number = new Intl.NumberFormat('en-GB');
const credits = new Intl.NumberFormat('en-GB', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** Times as the API gives them are UTC; shown in UTC, said so. */
export const formatTime = (iso: string | null): string => (iso === null ? 'never' : `${dateTime.format(new Date(iso))} UTC`);
export const formatPoints = (value: number): string => number.format(value);
export const formatCredits = (value: number): string => credits.format(value);
export const customerName = (c: { first_name: string | null; last_name: string | null; email: string | null; remote_id: number }): string =>
  [c.first_name, c.last_name].filter(Boolean).join(' ') || c.email || `Customer ${c.remote_id}`;
const date = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });
/** The UTC day of a time as the API gives it. */
export const formatDate = (iso: string): string => date.format(new Date(iso));
