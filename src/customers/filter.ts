import { Type } from 'typebox';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { assertParams, readParams } from '../http/query.js';
import { findCustomer } from './repository.js';

// The `customer_identifier` filter of the shop's lists (points events, redemptions).

export const CUSTOMER_FILTER = {
  customer_identifier: Type.Optional(
    Type.String({ minLength: 1, description: "Only this customer's records (remote_id or e-mail address, case-insensitive)", examples: ['ada@example.com'] }),
  ),
};

/**
 * The remote_id the filter names: undefined when the filter is absent, 0 when no customer has
 * it (no record has customer 0: an unknown customer's page is empty, not an error).
 */
export async function filteredCustomer(db: DB, shopId: number, params: URLSearchParams): Promise<number | undefined> {
  const errors: ErrorDetail[] = [];
  const { customer_identifier } = readParams(params, CUSTOMER_FILTER, errors);
  assertParams(errors);
  if (customer_identifier === undefined) return undefined;
  const customer = await findCustomer(db, shopId, String(customer_identifier));
  return customer === undefined ? 0 : Number(customer.remote_id);
}
