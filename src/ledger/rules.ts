import { parseTime } from '../clock.js';
import { AppError, type ErrorDetail } from '../errors.js';
import { CREDITS_ERROR, NAMED_SOURCES, type PointsEventInput } from './schemas.js';

// The rules of one points event that need no database: amounts, times, expiry, names.
// Customers and balances are checked when the batch is applied (apply.ts).

export const DAY_MS = 86_400_000;
/** applied_at may run ahead of our clock by this much (clients' clocks drift). */
export const MAX_FUTURE_MS = 5 * 60_000;

export interface ShopRules {
  per_event_expiry: boolean;
  points_expiry_days: number | null;
}

/** A points event whose fields are valid, in storage units. */
export interface EventDraft {
  customerIdentifier: string;
  source: string;
  points: number;
  /** Hundredths of a credit. */
  credits: number;
  internalNote: string | null;
  externalNote: string | null;
  customActionName: string | null;
  appliedAt: number;
  /** When what the event grants expires; null for never, and for a pure deduction. */
  expiresAt: number | null;
}

/**
 * Credits in hundredths, or null when the number has more than 2 decimals. The test is on the
 * number's shortest decimal text, i.e. what the client wrote: 19.99 passes, 0.1 + 0.2 does not.
 */
export function toHundredths(value: number): number | null {
  if (!/^-?\d+(\.\d{1,2})?$/.test(String(value))) return null;
  return Math.round(value * 100) || 0;
}

const blank = (value: string | null | undefined): value is null | undefined | '' => value === undefined || value === null || value.trim() === '';

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Checks one schema-valid event against the shop's settings and the clock. Params in the
 * returned errors are prefixed with `prefix` (e.g. `points_events[3].`).
 */
export function draftEvent(input: PointsEventInput, shop: ShopRules, now: number, prefix: string): EventDraft | ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  const fail = (field: string, code: string, message: string) => errors.push({ param: prefix + field, code, message });

  const points = input.points_amount ?? 0;
  let credits = 0;
  if (input.credits_amount !== undefined) {
    const hundredths = toHundredths(input.credits_amount);
    if (hundredths === null) fail('credits_amount', CREDITS_ERROR.code, CREDITS_ERROR.message);
    else credits = hundredths;
  }
  if (points === 0 && credits === 0 && errors.length === 0) {
    fail('points_amount', 'amount_required', 'points_amount or credits_amount must be present and non-zero');
  }

  if (NAMED_SOURCES.has(input.source)) {
    const name = input.custom_action_name;
    if (blank(name)) fail('custom_action_name', 'missing', `custom_action_name is required when source is ${input.source}`);
    else if (input.source === 'visit_url' && !isHttpUrl(name.trim())) {
      fail('custom_action_name', 'invalid_url', 'custom_action_name must be the http or https URL visited when source is visit_url');
    }
  }

  let appliedAt = now;
  if (!blank(input.applied_at)) {
    const parsed = parseTime(input.applied_at);
    if (parsed === null) fail('applied_at', 'invalid_datetime', 'applied_at must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z, or blank');
    else if (parsed > now + MAX_FUTURE_MS) fail('applied_at', 'applied_at_in_future', 'applied_at may be at most 5 minutes in the future');
    else appliedAt = parsed;
  }

  const grants = points > 0 || credits > 0;
  let expiresAt: number | null = null;
  if (!blank(input.expires_at)) {
    const parsed = parseTime(input.expires_at);
    if (!shop.per_event_expiry) {
      fail('expires_at', 'expires_at_not_allowed', 'expires_at may only be set when the shop has per-event expiry enabled');
    } else if (parsed === null) {
      fail('expires_at', 'invalid_datetime', 'expires_at must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z, or blank');
    } else if (!grants) {
      fail('expires_at', 'expires_at_on_deduction', 'expires_at may not be set on an event that only deducts');
    } else if (parsed <= appliedAt) {
      fail('expires_at', 'expires_at_before_applied_at', 'expires_at must be after applied_at');
    } else {
      expiresAt = parsed;
    }
  } else if (grants && shop.points_expiry_days !== null) {
    expiresAt = appliedAt + shop.points_expiry_days * DAY_MS;
  }

  if (errors.length > 0) return errors;
  return {
    customerIdentifier: input.customer_identifier,
    source: input.source,
    points,
    credits,
    internalNote: input.internal_note ?? null,
    externalNote: input.external_note ?? null,
    customActionName: input.custom_action_name ?? null,
    appliedAt,
    expiresAt,
  };
}

/**
 * The 422 for invalid points events. The message counts failing events in a batch (one
 * event may fail on several fields), and fields in a single request.
 */
export function invalidEvents(details: ErrorDetail[], failingEvents: number | null): AppError {
  let message: string;
  if (details.length === 1) message = details[0]!.message;
  else if (failingEvents === null) message = `${details.length} fields are invalid`;
  else message = failingEvents === 1 ? '1 points event is invalid' : `${failingEvents} points events are invalid`;
  return new AppError('validation_failed', message, { details });
}
