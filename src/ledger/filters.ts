import { Type } from 'typebox';
import { AppError, type ErrorDetail } from '../errors.js';
import type { EventFilters } from './events-repository.js';
import { parseTime } from '../clock.js';
import { ALL_SOURCES } from './schemas.js';

// Filters of the points event lists: `source=order`, `applied_at[gte]=2026-01-01T00:00:00Z`.

const RANGE_OPERATORS = ['gt', 'gte', 'lt', 'lte'] as const;

/** The documented filter parameters (the query string itself is parsed by parseEventFilters). */
export const EVENT_FILTERS = {
  source: Type.Optional(Type.Enum([...ALL_SOURCES], { description: 'Only events of this source' })),
  ...Object.fromEntries(
    RANGE_OPERATORS.map((op) => [
      `applied_at[${op}]`,
      Type.Optional(Type.String({ format: 'date-time', description: `Only events whose applied_at is ${{ gt: 'after', gte: 'at or after', lt: 'before', lte: 'at or before' }[op]} this time` })),
    ]),
  ),
};

export function parseEventFilters(params: URLSearchParams): EventFilters {
  const errors: ErrorDetail[] = [];
  const filters: EventFilters = {};
  const source = params.getAll('source');
  if (source.length > 1) errors.push({ param: 'source', code: 'repeated', message: 'source must be given once' });
  else if (source.length === 1) {
    if ((ALL_SOURCES as readonly string[]).includes(source[0]!)) filters.source = source[0]!;
    else errors.push({ param: 'source', code: 'invalid_value', message: `source must be one of: ${ALL_SOURCES.join(', ')}; got ${JSON.stringify(source[0])}` });
  }
  for (const op of RANGE_OPERATORS) {
    const name = `applied_at[${op}]`;
    const values = params.getAll(name);
    if (values.length === 0) continue;
    const time = values.length === 1 ? parseTime(values[0]!) : null;
    if (values.length > 1) errors.push({ param: name, code: 'repeated', message: `${name} must be given once` });
    else if (time === null) errors.push({ param: name, code: 'invalid_value', message: `${name} must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z; got ${JSON.stringify(values[0])}` });
    else (filters.appliedAt ??= {})[op] = time;
  }
  if (errors.length > 0) {
    throw new AppError('invalid_parameter', errors.length === 1 ? errors[0]!.message : `${errors.length} query parameters are invalid`, { details: errors });
  }
  return filters;
}
