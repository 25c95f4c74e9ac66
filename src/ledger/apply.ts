import type { DB } from '../db/tables.js';
import { pushTo } from '../core/maps.js';
import type { FieldError } from '../core/validation.js';
import { findCustomers, parseCustomerIdentifier } from '../customers/repository.js';
import { postEvents } from './post.js';
import type { Alongside, Posted, Posting } from './posting.js';
import type { CheckedEvent } from './rules.js';
import type { PointsEvent } from './schemas.js';

// Points events as a merchant sends them (one, or a batch) onto the ledger: every customer is
// resolved, every failure found, and the events posted (post.ts) only when none fails.

const namesEmail = (identifier: string): boolean => identifier.includes('@');

/** The remote id a customer_identifier names, when it names one rather than an e-mail; null when it names neither. */
function remoteIdOf(identifier: string): number | null {
  const parsed = parseCustomerIdentifier(identifier);
  return parsed !== null && 'remoteId' in parsed ? parsed.remoteId : null;
}

const notFound = (identifier: string): FieldError => ({
  field: 'customer_identifier',
  code: 'customer_not_found',
  message: `No customer with remote_id or e-mail ${JSON.stringify(identifier)}`,
});

/** The events written, or why none was: each failure with the index of its event. */
export type Applied = { events: PointsEvent[]; posted: Posted; failures?: undefined } | { events?: undefined; failures: FieldError[] };

export interface ApplyOptions {
  /** Judge the events but write nothing: the caller fails already (a bad batch body). */
  judgeOnly?: boolean;
  /** Rows written in the events' statement (posting.ts), when the events are written. */
  alongside?: Alongside;
}

/**
 * Applies the events (each with a draft, or the errors its fields already had), in order, all
 * or nothing. When any fails, nothing is written and every failure comes back, by event index
 * and in index order; otherwise the events written come back as the API shows them, in order.
 */
export async function applyEvents(trx: DB, shopId: number, entries: readonly CheckedEvent[], now: number, options: ApplyOptions = {}): Promise<Applied> {
  const failures = new Map<number, FieldError[]>();
  const fail = (index: number, errors: readonly FieldError[]) => {
    for (const error of errors) pushTo(failures, index, { ...error, index });
  };

  // Every valid customer_identifier is looked up, also on events whose other fields fail, so
  // customer_not_found is reported with their field errors. Balances, though, are judged only
  // for events whose fields are all valid: an invalid event's amounts mean nothing. A remote id
  // of a valid event is read once, with its customer's lock (PostOptions.resolve); an e-mail is
  // looked up first, since the lock is taken by remote id.
  const found = await findCustomers(
    trx,
    shopId,
    entries.flatMap((e) => (e.customerIdentifier !== null && (e.draft === null || namesEmail(e.customerIdentifier)) ? [e.customerIdentifier] : [])),
  );
  const postings: Posting[] = [];
  const indexOf: number[] = [];
  entries.forEach(({ customerIdentifier, draft, errors }, i) => {
    if (draft === null) fail(i, errors);
    if (customerIdentifier === null) return;
    const remoteId = draft === null || namesEmail(customerIdentifier) ? found.get(customerIdentifier)?.remote_id : remoteIdOf(customerIdentifier);
    if (remoteId === undefined || remoteId === null) {
      fail(i, [notFound(customerIdentifier)]);
      return;
    }
    if (draft === null) return;
    // The e-mail is set by the ledger, read with the lock.
    postings.push({ customer: { remoteId: Number(remoteId), email: null }, entry: draft });
    indexOf.push(i);
  });

  const posted = await postEvents(trx, shopId, postings, now, {
    judgeOnly: failures.size > 0 || options.judgeOnly === true,
    alongside: options.alongside,
    resolve: true,
  });
  for (const f of posted.failures) {
    const i = indexOf[f.index]!;
    fail(i, [f.code === 'customer_not_found' ? notFound(entries[i]!.customerIdentifier!) : { field: f.field, code: f.code, message: f.message }]);
  }
  if (failures.size > 0) return { failures: [...failures.entries()].sort(([a], [b]) => a - b).flatMap(([, errors]) => errors) };
  return { events: posted.events, posted };
}
