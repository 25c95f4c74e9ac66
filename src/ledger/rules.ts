import { DAY_MS, parseTime } from '../clock.js';
import { showError, type FieldError } from '../core/validation.js';
import { AppError } from '../errors.js';
import type { EventEntry } from './posting.js';
import { CREDITS_ERROR, NAMED_SOURCES, type PointsEventInput } from './schemas.js';

// The rules of one points event that need no database: amounts, times, expiry, names.
// Customers and balances are checked when the batch is applied (apply.ts).
// The rules run on every field that passed its schema, not only on wholly valid events.

/** applied_at may run ahead of our clock by this much (clients' clocks drift). */
export const MAX_FUTURE_MS = 5 * 60_000;

export interface ShopRules {
  per_event_expiry: boolean;
  points_expiry_days: number | null;
}

/** A points event as a merchant sent it, its fields valid: the entry to post, and whom it is for. */
export type EventDraft = EventEntry & { customerIdentifier: string };

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

const NO_FIELDS: ReadonlySet<string> = new Set();
const NO_ERRORS: readonly FieldError[] = Object.freeze([]);

/**
 * Checks one event against the shop's settings and the clock. Fields named in `invalid` failed
 * their schema: they are never read, and a rule that needs one of them waits until it is valid,
 * so every other failing field is still reported. A draft comes back only when no field failed.
 * Errors name the event's fields; which event they belong to is the caller's to say.
 */
export function draftEvent(input: PointsEventInput, shop: ShopRules, now: number, invalid: ReadonlySet<string> = NO_FIELDS): EventDraft | FieldError[] {
  const errors: FieldError[] = [];
  const fail = (field: string, code: string, message: string) => errors.push({ field, code, message });
  const valid = (field: keyof PointsEventInput) => !invalid.has(field);

  // Both amounts passed their schema: their signs are known even when credits has too many decimals.
  const amountsKnown = valid('points_amount') && valid('credits_amount');
  const points = valid('points_amount') ? (input.points_amount ?? 0) : 0;
  let credits = 0;
  if (valid('credits_amount') && input.credits_amount !== undefined) {
    const hundredths = toHundredths(input.credits_amount);
    if (hundredths === null) fail('credits_amount', CREDITS_ERROR.code, CREDITS_ERROR.message);
    else credits = hundredths;
  }
  if (amountsKnown && points === 0 && credits === 0 && errors.length === 0) {
    fail('points_amount', 'amount_required', 'points_amount or credits_amount must be present and non-zero');
  }
  const grants = amountsKnown && (points > 0 || (input.credits_amount ?? 0) > 0);

  if (valid('source') && valid('custom_action_name') && NAMED_SOURCES.has(input.source)) {
    const name = input.custom_action_name;
    if (blank(name)) fail('custom_action_name', 'missing', `custom_action_name is required when source is ${input.source}`);
    else if (input.source === 'visit_url' && !isHttpUrl(name.trim())) {
      fail('custom_action_name', 'invalid_url', 'custom_action_name must be the http or https URL visited when source is visit_url');
    }
  }

  let appliedAt = now;
  let appliedAtKnown = valid('applied_at');
  if (appliedAtKnown && !blank(input.applied_at)) {
    const parsed = parseTime(input.applied_at);
    appliedAtKnown = false;
    if (parsed === null) fail('applied_at', 'invalid_datetime', 'applied_at must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z, or blank');
    else if (parsed > now + MAX_FUTURE_MS) fail('applied_at', 'applied_at_in_future', 'applied_at may be at most 5 minutes in the future');
    else {
      appliedAt = parsed;
      appliedAtKnown = true;
    }
  }

  let expiresAt: number | null = null;
  if (!valid('expires_at')) {
    // Its schema error is reported already.
  } else if (!blank(input.expires_at)) {
    const parsed = parseTime(input.expires_at);
    if (!shop.per_event_expiry) {
      fail('expires_at', 'expires_at_not_allowed', 'expires_at may only be set when the shop has per-event expiry enabled');
    } else if (parsed === null) {
      fail('expires_at', 'invalid_datetime', 'expires_at must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z, or blank');
    } else if (!amountsKnown) {
      // Whether the event deducts is unknown until its amounts are valid.
    } else if (!grants) {
      fail('expires_at', 'expires_at_on_deduction', 'expires_at may not be set on an event that only deducts');
    } else if (!appliedAtKnown) {
      // Compared with applied_at once applied_at is valid.
    } else if (parsed <= appliedAt) {
      fail('expires_at', 'expires_at_before_applied_at', 'expires_at must be after applied_at');
    } else {
      expiresAt = parsed;
    }
  } else if (grants && shop.points_expiry_days !== null) {
    expiresAt = appliedAt + shop.points_expiry_days * DAY_MS;
  }

  if (errors.length > 0 || invalid.size > 0) return errors;
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

/** One event as judged before the database. */
export interface CheckedEvent {
  /** Null when any field failed. */
  draft: EventDraft | null;
  /** customer_identifier when it passed its schema: looked up even when other fields fail. */
  customerIdentifier: string | null;
  /** Schema errors, then rule errors; empty when there is a draft. */
  errors: readonly FieldError[];
}

/**
 * Judges one event (a request body or a batch element) given its schema errors: the rules run
 * on every field that passed its schema, so all failing fields are reported together.
 */
export function checkEvent(input: unknown, schemaErrors: readonly FieldError[], shop: ShopRules, now: number): CheckedEvent {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { draft: null, customerIdentifier: null, errors: schemaErrors };
  // An unknown field (`colour`) marks nothing known.
  const invalid = schemaErrors.length === 0 ? NO_FIELDS : new Set(schemaErrors.map((e) => e.field));
  const event = input as PointsEventInput;
  const customerIdentifier = invalid.has('customer_identifier') ? null : event.customer_identifier;
  const result = draftEvent(event, shop, now, invalid);
  if (!Array.isArray(result)) return { draft: result, customerIdentifier, errors: NO_ERRORS };
  return { draft: null, customerIdentifier, errors: schemaErrors.length === 0 ? result : [...schemaErrors, ...result] };
}

/**
 * The 422 for invalid points events, shown with params into the body: `list` names a batch's
 * list of events (`points_events[3].points_amount`); errors with no index are about the body
 * itself (an unknown top-level field) and come first. The message counts failing events in a
 * batch (one event may fail on several fields), and fields in a single request.
 */
export function invalidEvents(errors: readonly FieldError[], list?: string): AppError {
  const details = errors.map((e) => showError(e, list));
  const failingEvents = new Set(errors.flatMap((e) => (e.index === undefined ? [] : [e.index]))).size;
  const bodyFields = errors.length - errors.filter((e) => e.index !== undefined).length;
  let message: string;
  if (details.length === 1) message = details[0]!.message;
  else if (!failingEvents) message = `${details.length} fields are invalid`;
  else {
    const events = failingEvents === 1 ? '1 points event' : `${failingEvents} points events`;
    if (bodyFields > 0) message = `${bodyFields} field${bodyFields === 1 ? '' : 's'} and ${events} are invalid`;
    else message = `${events} ${failingEvents === 1 ? 'is' : 'are'} invalid`;
  }
  return new AppError('validation_failed', message, { details });
}
