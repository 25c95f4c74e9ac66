import { Type } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import { assertParams, readParams } from '../http/query.js';
import type { EventFilters } from './events-repository.js';
import { ALL_SOURCES } from './schemas.js';

// Filters of the points event lists: `source=order`, `applied_at[gte]=2026-01-01T00:00:00Z`.

const RANGE_OPERATORS = ['gt', 'gte', 'lt', 'lte'] as const;

/** The filter parameters: documented by these schemas, and read by them (parseEventFilters). */
export const EVENT_FILTERS = {
  source: Type.Optional(Type.Enum([...ALL_SOURCES], { description: 'Only events of this source' })),
  ...Object.fromEntries(
    RANGE_OPERATORS.map((op) => [
      `applied_at[${op}]`,
      Type.Optional(
        Type.String({
          format: 'date-time',
          description: `Only events whose applied_at is ${{ gt: 'after', gte: 'at or after', lt: 'before', lte: 'at or before' }[op]} this time`,
        }),
      ),
    ]),
  ),
};

/** The filters of a list request, read by their schemas (http/query.ts). */
export function parseEventFilters(params: URLSearchParams): EventFilters {
  const errors: ErrorDetail[] = [];
  const values = readParams(params, EVENT_FILTERS, errors);
  assertParams(errors);
  const filters: EventFilters = {};
  if (values.source !== undefined) filters.source = String(values.source);
  for (const op of RANGE_OPERATORS) {
    const time = values[`applied_at[${op}]`];
    if (time !== undefined) (filters.appliedAt ??= {})[op] = Number(time);
  }
  return filters;
}
