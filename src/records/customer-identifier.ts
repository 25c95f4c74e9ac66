import { Type, type TSchema } from 'typebox';
import { findCustomers, parseCustomerIdentifier } from '../customers/repository.js';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { CUSTOMER_IDENTIFIER, type Field, type Fields, type Row } from './fields.js';

export { CUSTOMER_IDENTIFIER };

// One name for a customer (README, "Using the API"): a body that references a customer by its
// remote_id also takes `customer_identifier`, a remote_id or an e-mail, as the points events
// do. It is resolved to the remote_id and stored in the field it stands for, which responses
// show; the identifier itself is never stored.

// Asked for every row of an import, three times: found once per description's fields.
const identified = new WeakMap<Fields, [string, Field] | null>();

/** The field customer_identifier stands for (the one with `customerIdentifier`), if any. */
export function identifiedField(fields: Fields): [string, Field] | undefined {
  let found = identified.get(fields);
  if (found === undefined) identified.set(fields, (found = Object.entries(fields).find(([, f]) => f.customerIdentifier) ?? null));
  return found ?? undefined;
}

/** Must the customer exist? An e-mail always names one; a remote_id only where the field references customers. */
const mustExist = (field: Field) => field.references !== undefined;

/** The identifier's schema in a request body, beside the field it stands for. */
export function identifierSchema(name: string, field: Field): TSchema {
  const unknown = mustExist(field) ? 'It must name a customer of the shop.' : 'An e-mail must name a customer of the shop.';
  return Type.String({
    minLength: 1,
    maxLength: 254,
    description: `Instead of ${name}: the customer's remote_id (as a string) or e-mail (case-insensitive). ${unknown} Given with ${name}, both must name the same customer.`,
    examples: ['ada@example.com', '7012345678'],
  });
}

/**
 * Marks customer_identifier failed, and with it the field it stood for when the body did not
 * give that too: no later rule reads a customer the body did not give.
 */
export function identifierFailed(fields: Fields, body: Row, invalid: Set<string>): void {
  invalid.add(CUSTOMER_IDENTIFIER);
  const identified = identifiedField(fields);
  if (identified !== undefined && !(identified[0] in body)) invalid.add(identified[0]);
}

/**
 * The rules of customer_identifier that need no database, beside the field's own: a whole body
 * (create, PUT) names a required customer one way or the other, and the identifier is a
 * remote_id or an e-mail. What fails goes into `invalid`.
 */
export function identifierErrors(fields: Fields, body: Row, invalid: Set<string>, whole: boolean): ErrorDetail[] {
  const identified = identifiedField(fields);
  if (identified === undefined) return [];
  const [name, field] = identified;
  const errors: ErrorDetail[] = [];
  const identifier = body[CUSTOMER_IDENTIFIER];
  if (whole && field.required && !(name in body) && identifier === undefined) {
    errors.push({ param: name, code: 'missing', message: `give ${name} or ${CUSTOMER_IDENTIFIER}` });
    invalid.add(name);
  }
  if (typeof identifier === 'string' && !invalid.has(CUSTOMER_IDENTIFIER) && parseCustomerIdentifier(identifier) === null) {
    errors.push({
      param: CUSTOMER_IDENTIFIER,
      code: 'invalid_format',
      message: `${CUSTOMER_IDENTIFIER} must be a remote_id (a positive integer) or an e-mail address`,
    });
    invalid.add(CUSTOMER_IDENTIFIER);
  }
  if (invalid.has(CUSTOMER_IDENTIFIER)) identifierFailed(fields, body, invalid);
  return errors;
}

/**
 * Resolves the customer_identifier of each body (its other rules passed) into the field it
 * stands for, in two queries for them all. A body without one comes back as it is; the errors
 * (customer_not_found, conflicting_parameters) come back by index, on customer_identifier.
 */
export async function resolveIdentifiers(
  db: DB,
  shopId: number,
  fields: Fields,
  bodies: readonly Row[],
): Promise<{ bodies: Row[]; errors: Map<number, ErrorDetail[]> }> {
  const identified = identifiedField(fields);
  const errors = new Map<number, ErrorDetail[]>();
  if (identified === undefined) return { bodies: [...bodies], errors };
  const [name, field] = identified;
  const given = bodies.map((body) => {
    const identifier = body[CUSTOMER_IDENTIFIER];
    const parsed = typeof identifier === 'string' ? parseCustomerIdentifier(identifier) : null;
    return parsed === null ? null : { identifier: identifier as string, parsed };
  });
  // A remote_id that may stay unresolved is not looked up.
  const wanted = given.flatMap((g) => (g !== null && ('email' in g.parsed || mustExist(field)) ? [g.identifier] : []));
  const found = await findCustomers(db, shopId, wanted);
  const resolved = bodies.map((body, i) => {
    const g = given[i];
    if (g === null || g === undefined) return body;
    const fail = (code: string, message: string) => {
      errors.set(i, [{ param: CUSTOMER_IDENTIFIER, code, message }]);
      return body;
    };
    const customer = found.get(g.identifier);
    const remoteId = customer !== undefined ? Number(customer.remote_id) : 'remoteId' in g.parsed && !mustExist(field) ? g.parsed.remoteId : null;
    if (remoteId === null) return fail('customer_not_found', `No customer with remote_id or e-mail ${JSON.stringify(g.identifier)}`);
    if (name in body && body[name] !== remoteId) {
      return fail(
        'conflicting_parameters',
        `${CUSTOMER_IDENTIFIER} names customer ${remoteId} but ${name} is ${JSON.stringify(body[name])}; give one of them, or both naming the same customer`,
      );
    }
    const { [CUSTOMER_IDENTIFIER]: _identifier, ...rest } = body;
    return { ...rest, [name]: remoteId };
  });
  return { bodies: resolved, errors };
}
