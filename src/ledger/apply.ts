import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { findCustomers } from '../customers/repository.js';
import { postEvents, type Posting } from './post.js';
import { invalidEvents, type CheckedEvent } from './rules.js';
import type { PointsEvent } from './schemas.js';
import { pushTo } from '../core/maps.js';

// Points events as a merchant sends them (one, or a batch) onto the ledger: every customer is
// resolved, every failure found, and the events posted (post.ts) only when none fails.

/**
 * Applies the events (each with a draft, or the errors its fields already had). Throws a 422
 * listing every failing event when any fails, after `bodyErrors` (the batch body's own);
 * otherwise writes them all and returns them as the API shows them, in order. `batch` decides
 * the params (`points_events[3].points_amount`).
 */
export async function applyEvents(
  trx: DB,
  shopId: number,
  entries: readonly CheckedEvent[],
  now: number,
  batch: boolean,
  bodyErrors: readonly ErrorDetail[] = [],
): Promise<PointsEvent[]> {
  const prefix = (i: number) => (batch ? `points_events[${i}].` : '');
  const failures = new Map<number, ErrorDetail[]>();
  const fail = (i: number, details: readonly ErrorDetail[]) => {
    for (const detail of details) pushTo(failures, i, detail);
  };

  // Every valid customer_identifier is looked up, also on events whose other fields fail, so
  // customer_not_found is reported with their field errors. Balances, though, are judged only
  // for events whose fields are all valid: an invalid event's amounts mean nothing.
  const found = await findCustomers(trx, shopId, entries.flatMap((e) => (e.customerIdentifier === null ? [] : [e.customerIdentifier])));
  const postings: Posting[] = [];
  const indexOf: number[] = [];
  entries.forEach(({ customerIdentifier, draft, errors }, i) => {
    if (draft === null) fail(i, errors);
    if (customerIdentifier === null) return;
    const row = found.get(customerIdentifier);
    if (row === undefined) {
      fail(i, [{ param: `${prefix(i)}customer_identifier`, code: 'customer_not_found', message: `No customer with remote_id or e-mail ${JSON.stringify(customerIdentifier)}` }]);
      return;
    }
    if (draft === null) return;
    postings.push({ customer: { remoteId: Number(row.remote_id), email: row.email }, entry: draft });
    indexOf.push(i);
  });

  const posted = await postEvents(trx, shopId, postings, now, { judgeOnly: failures.size > 0 || bodyErrors.length > 0 });
  for (const f of posted.failures) fail(indexOf[f.index]!, [{ param: `${prefix(indexOf[f.index]!)}${f.field}`, code: f.code, message: f.message }]);
  if (failures.size > 0 || bodyErrors.length > 0) {
    const details = [...bodyErrors, ...[...failures.entries()].sort(([a], [b]) => a - b).flatMap(([, d]) => d)];
    throw invalidEvents(details, batch ? failures.size : null, bodyErrors.length);
  }
  return posted.events;
}
