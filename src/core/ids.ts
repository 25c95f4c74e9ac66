import { notFound } from '../errors.js';

// IDs as they appear in paths and bodies: remote_ids synced from the commerce platform and the
// API's own record IDs alike are positive integers that stay exact as JSON numbers.

/** The largest ID accepted: IDs stay exact as JSON numbers. */
export const MAX_REMOTE_ID = Number.MAX_SAFE_INTEGER;

/** A decimal ID (a path's `{id}` or `{remote_id}`), or null when the text is not one. */
export function parseRemoteId(text: string): number | null {
  if (!/^[1-9]\d{0,15}$/.test(text)) return null;
  const id = Number(text);
  return id <= MAX_REMOTE_ID ? id : null;
}

/** A path's ID, or 404 naming `what` (thrown inside a write, so that a retried key replays it). */
export function pathId(text: string, what: string): number {
  const id = parseRemoteId(text);
  if (id === null) throw notFound(what, text);
  return id;
}

/**
 * How a customer_identifier names a customer: containing `@`, an e-mail (case-insensitive);
 * otherwise a decimal remote id. Null when it is neither.
 */
export type CustomerIdentifier = { email: string } | { remoteId: number };

export function parseCustomerIdentifier(identifier: string): CustomerIdentifier | null {
  const text = identifier.trim();
  // No stored e-mail holds a NUL (bodies with one are refused), and PostgreSQL cannot compare one.
  if (text.includes('@')) return text.includes('\u0000') ? null : { email: text.toLowerCase() };
  const remoteId = parseRemoteId(text);
  return remoteId === null ? null : { remoteId };
}
