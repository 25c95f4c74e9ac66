import { LoyaltyApiError } from '@loyalty-api/client';

/** An error in words for a person: the API's message, with the request id to quote. */
export function errorText(error: unknown): string {
  // A token's scopes are the merchant's choice, not a fault: say what to do about it.
  if (error instanceof LoyaltyApiError && error.code === 'insufficient_scope') return `${error.message}. Sign in with an API token that has it.`;
  if (error instanceof LoyaltyApiError) return error.requestId ? `${error.message} (request ${error.requestId})` : error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The API's validation details split by the form's fields: `byField[name]` is the message for a
 * field the form shows (details[].param names it); the rest are the form's own.
 */
export function fieldErrors(
  error: unknown,
  fields: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): { byField: Record<string, string>; rest: string | null } {
  if (!(error instanceof LoyaltyApiError)) return { byField: {}, rest: error ? errorText(error) : null };
  const byField: Record<string, string> = {};
  const other: string[] = [];
  for (const detail of error.details) {
    const field = fieldOf(detail.param, fields, aliases);
    if (field !== undefined) byField[field] = byField[field] ? `${byField[field]} ${detail.message}` : detail.message;
    else other.push(detail.message);
  }
  const placed = Object.keys(byField).length > 0;
  const rest = other.length > 0 ? other.join(' ') : placed ? null : errorText(error);
  return { byField, rest };
}

/** The form field a detail's param names: itself, its head (`allowed_origins[2]`), or another name the form gives it. */
function fieldOf(param: string | undefined, fields: readonly string[], aliases: Readonly<Record<string, string>>): string | undefined {
  if (param === undefined) return undefined;
  const head = param.replace(/[[.].*$/, '');
  const name = aliases[head] ?? head;
  return fields.includes(name) ? name : undefined;
}
