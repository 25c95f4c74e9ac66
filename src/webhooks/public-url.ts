import type { ErrorDetail } from '../errors.js';
import { literalHostKind } from './address-guard.js';

// The part of the address guard that runs when a webhook is written: a url whose host is a
// non-public IP literal (or localhost) could never be delivered to, so it is refused at once,
// with the body's other errors. Names are not resolved here: what they resolve to can change,
// and every delivery guards them again (address-guard.ts).

/** The url's errors when its host is, by its spelling alone, not a public address. */
export function publicUrlErrors(url: string, param = 'url'): ErrorDetail[] {
  let hostname: string;
  try {
    // The same parser as the delivery's: `http://2130706433/` is 127.0.0.1 to both.
    hostname = new URL(url).hostname;
  } catch {
    return [{ param, code: 'invalid_format', message: `${param} must be a valid uri` }];
  }
  const kind = literalHostKind(hostname);
  if (kind === null) return [];
  return [{ param, code: 'url_not_public', message: `${param} must point at a public address; ${hostname} is ${kind}` }];
}
