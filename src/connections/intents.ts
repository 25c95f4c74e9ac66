import { parseTime } from '../clock.js';

// What a delivery asks for, whatever the platform sent it: the platforms' payloads are mapped
// to these (shopify.ts, woocommerce.ts), and apply.ts writes them. A payload that can never
// apply as sent throws Unappliable, and the delivery is kept as `failed` with its reason.

export class Unappliable extends Error {}

/** A customer as the platform shows it: the fields it owns; the others stay as stored. */
export interface CustomerIntent {
  remoteId: number;
  /** The source's updated_at; null when the payload carries none. */
  updatedAt: number | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  /** Only when the platform sends one; else the stored phone stays. */
  phone?: string | null;
  /** Written only when no such customer exists yet (a WooCommerce order's billing names). */
  onlyCreate?: boolean;
}

/** An order: the body of its PUT /orders, but total_refunded, which recorded refunds may raise. */
export interface OrderIntent {
  remoteId: number;
  updatedAt: number | null;
  customer: CustomerIntent | null;
  /** Hundredths. */
  total: number;
  /** What the order's own payload says was refunded, in hundredths, within [0, total]. */
  ownRefunded: number;
  currency: string;
  financial_status: string;
  discount_codes: string[];
  placed_at: string;
}

export type Intent =
  | { kind: 'customer'; customer: CustomerIntent }
  | { kind: 'order'; order: OrderIntent }
  | { kind: 'refund'; refundId: number; orderRemoteId: number; amount: number }
  | { kind: 'void'; orderRemoteId: number }
  | { kind: 'redact'; customerRemoteId: number }
  | { kind: 'uninstall' }
  | { kind: 'ignore'; reason: string };

/** How the connection reads orders. */
export interface Reading {
  earnOn: 'subtotal' | 'total';
  acceptTestOrders: boolean;
}

export type Payload = Record<string, unknown>;

export const isObject = (value: unknown): value is Payload => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A platform's id (a JSON number or a decimal string) as a remote_id; `what` names it in the reason. */
export function remoteIdOf(value: unknown, what: string): number {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw new Unappliable(`${what} must be a positive integer id, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * An amount in hundredths, from a decimal string ("59.90") or a number; absent is 0. More than
 * two decimals that are not zeros (a three-decimal currency) can never apply exactly.
 */
export function cents(value: unknown, what: string): number {
  if (value === null || value === undefined || value === '') return 0;
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^-?\d{1,13}(\.\d+)?$/.test(text.trim()))
    throw new Unappliable(`${what} must be a decimal amount, got ${JSON.stringify(value)}`);
  const [whole, fraction = ''] = text.trim().replace('-', '').split('.');
  if (/[1-9]/.test(fraction.slice(2))) throw new Unappliable(`${what} has more than 2 decimals: ${text}`);
  const amount = Number(whole) * 100 + Number(fraction.slice(0, 2).padEnd(2, '0'));
  return text.trim().startsWith('-') ? -amount : amount;
}

/** A time with its offset ("2026-01-15T07:00:00-05:00") in epoch ms; `utc` reads one without an offset as UTC (WooCommerce's *_gmt). */
export function timeOf(value: unknown, what: string, utc = false): number {
  if (typeof value !== 'string') throw new Unappliable(`${what} must be a date-time, got ${JSON.stringify(value)}`);
  const text = utc && /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value.trim()) ? `${value.trim()}Z` : value;
  const time = parseTime(text);
  if (time === null) throw new Unappliable(`${what} must be an RFC 3339 date-time, got ${JSON.stringify(value)}`);
  return time;
}

/** A time when one is given, else null. */
export const maybeTime = (value: unknown, what: string, utc = false): number | null =>
  value === null || value === undefined || value === '' ? null : timeOf(value, what, utc);

/** A text field as the API stores it: null when absent or blank. */
export const textOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

/** Hundredths kept within [0, total]. */
export const within = (amount: number, total: number): number => Math.min(Math.max(amount, 0), total);
