import { LoyaltyApiError } from '@loyalty-api/client';

/** An error in words for a person: the API's message, with the request id to quote. */
export function errorText(error: unknown): string {
  // A token's scopes are the merchant's choice, not a fault: say what to do about it.
  if (error instanceof LoyaltyApiError && error.code === 'insufficient_scope') return `${error.message}. Sign in with an API token that has it.`;
  // No answer came (the client retried already): the request never reached the API.
  if (error instanceof LoyaltyApiError && error.code === 'network_error') {
    return `The server could not be reached (${error.message.replace(/^The request got no response: /, '')}). Check the connection, then retry.`;
  }
  if (error instanceof LoyaltyApiError) return error.requestId ? `${error.message} (request ${error.requestId})` : error.message;
  return error instanceof Error ? error.message : String(error);
}

/** An API message with the form's labels for the fields it names: "points_amount must be …" becomes "Points must be …". */
export function withLabels(message: string, labels: Readonly<Record<string, string>>, param?: string): string {
  // What reads as a code name (`points_amount`), and the detail's own field where it starts the message ("name is required").
  const names = Object.keys(labels)
    .filter((name) => name.includes('_'))
    .sort((a, b) => b.length - a.length);
  const own = param?.replace(/[[.].*$/, '');
  const start = own !== undefined && labels[own] !== undefined && message.startsWith(`${own} `) ? `${labels[own]}${message.slice(own.length)}` : message;
  if (names.length === 0) return start;
  const pattern = new RegExp(`\\b(${names.join('|')})\\b`, 'g');
  return start.replace(pattern, (name) => labels[name] ?? name);
}

/** A form's own check, before anything is sent: messages by field, as the API's details are. */
export class FormError extends Error {
  constructor(readonly details: { param: string; message: string }[]) {
    super(details.map((d) => d.message).join(' '));
  }
}

/**
 * The API's validation details split by the form's fields: `byField[name]` is the message for a
 * field the form shows (details[].param names it); the rest are the form's own.
 */
export function fieldErrors(
  error: unknown,
  fields: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
  labels: Readonly<Record<string, string>> = {},
): { byField: Record<string, string>; rest: string | null } {
  if (!(error instanceof LoyaltyApiError || error instanceof FormError)) return { byField: {}, rest: error ? errorText(error) : null };
  const byField: Record<string, string> = {};
  const other: string[] = [];
  for (const detail of error.details) {
    const field = fieldOf(detail.param, fields, aliases);
    const message = withLabels(detail.message, labels, detail.param);
    if (field !== undefined) byField[field] = byField[field] ? `${byField[field]} ${message}` : message;
    else other.push(message);
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
