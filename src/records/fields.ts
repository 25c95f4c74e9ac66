import { Type, type TSchema } from 'typebox';
import { isoTime, parseTime } from '../clock.js';
import type { ErrorDetail } from '../errors.js';

// The kinds of field a record may have, and how each is validated, stored and shown.
// Storage: times are epoch ms, money integer hundredths, booleans 0/1 (see db/tables.ts).

/** A record as columns or JSON fields, by name. */
export type Row = Record<string, unknown>;

/** The body field that may stand for a field holding a customer's remote_id (customer-identifier.ts). */
export const CUSTOMER_IDENTIFIER = 'customer_identifier';

/** Says in the field's own description that customer_identifier may be given instead. */
export function identifiedDescription(name: string, field: Field): string {
  return `${field.description}. Or give ${CUSTOMER_IDENTIFIER}${field.required ? `: one of ${name} and ${CUSTOMER_IDENTIFIER} is required` : ''}`;
}

interface Common {
  description: string;
  example: unknown;
  /** May be null (and is null when left out of a PUT). */
  nullable?: boolean;
  /** Must be sent on create (and on PUT). */
  required?: boolean;
  /** Offered as sort[order_type]; needs an index on (shop_id, column, id) and a non-null column. */
  sortable?: boolean;
  /** At most one record of the shop may hold a value; 'ci' compares case-insensitively. */
  unique?: 'exact' | 'ci';
  /** The value stored when a create leaves the field out. */
  default?: string | number | boolean | 'now' | readonly never[];
  /** Must name an existing record of the shop (resource path → its ID column). */
  references?: { table: string; column: string; code: string; message: string };
  /** Shown, never written by a request: set by the programme (a customer's referral_code, a referral's status). */
  readOnly?: boolean;
  /**
   * A customer's remote_id that a body may also give as `customer_identifier`, a remote_id or an
   * e-mail (records/customer-identifier.ts). One field per resource at most.
   */
  customerIdentifier?: boolean;
  /** Another name of the field: accepted on write instead of it (not both, unless equal), shown beside it. */
  alias?: string;
  /** Written by requests and stored, never shown (a connection's signing secret, given by the platform). */
  writeOnly?: boolean;
}

export type Field = Common &
  (
    | { kind: 'text'; maxLength: number; format?: 'email' | 'uri' | 'date'; pattern?: string }
    | { kind: 'enum'; values: readonly string[] }
    | { kind: 'integer'; minimum: number; maximum: number }
    | { kind: 'money'; minimum: number; maximum: number }
    | { kind: 'time' }
    | { kind: 'boolean' }
    /** A list of integers in a range, of values of an enum (each once), or of strings (codes), stored as JSON text; [] when none. */
    | { kind: 'list'; items: ListItems; maxItems: number }
    /** Generated on create (`prefix` + random), stored, and shown only in the create response. */
    | { kind: 'secret'; prefix: string }
  );

export type Fields = Readonly<Record<string, Field>>;

const nullable = (schema: Record<string, unknown>, field: Field) => (field.nullable ? { ...schema, type: [schema.type as string, 'null'] } : schema);

/** The schema of a field as sent in a request body. */
export function inputSchema(name: string, field: Field): TSchema {
  const meta = { description: field.customerIdentifier ? identifiedDescription(name, field) : field.description, examples: [field.example] };
  switch (field.kind) {
    case 'text':
      return Type.Unsafe(
        nullable(
          {
            type: 'string',
            minLength: 1,
            maxLength: field.maxLength,
            ...(field.format ? { format: field.format } : {}),
            ...(field.pattern ? { pattern: field.pattern } : {}),
            ...meta,
          },
          field,
        ),
      );
    case 'enum':
      return Type.Unsafe({ ...nullable({ type: 'string', ...meta }, field), enum: field.nullable ? [...field.values, null] : [...field.values] });
    case 'integer':
      return Type.Unsafe(nullable({ type: 'integer', minimum: field.minimum, maximum: field.maximum, ...meta }, field));
    case 'money':
      return Type.Unsafe(
        nullable(
          {
            type: 'number',
            minimum: field.minimum,
            maximum: field.maximum,
            'x-error': { code: 'invalid_amount', message: moneyMessage(name, field) },
            ...meta,
          },
          field,
        ),
      );
    case 'time':
      return Type.Unsafe(
        nullable(
          {
            type: 'string',
            format: 'date-time',
            'x-error': { code: 'invalid_datetime', message: `${name} must be an RFC 3339 date-time such as 2026-01-15T12:00:00Z` },
            ...meta,
          },
          field,
        ),
      );
    case 'boolean':
      return Type.Unsafe(nullable({ type: 'boolean', ...meta }, field));
    case 'list':
      return Type.Unsafe(
        nullable(
          { type: 'array', items: listItems(field.items), maxItems: field.maxItems, ...('maxLength' in field.items ? {} : { uniqueItems: true }), ...meta },
          field,
        ),
      );
    case 'secret':
      throw new Error(`${name}: secrets are generated, never sent`);
  }
}

/** The schema of a field as shown in a record. */
export function outputSchema(field: Field): TSchema {
  const meta = { description: field.description, examples: [field.example] };
  const type = (t: string, extra: object = {}) => Type.Unsafe(field.nullable ? { type: [t, 'null'], ...extra, ...meta } : { type: t, ...extra, ...meta });
  switch (field.kind) {
    case 'text':
      return type('string', field.format ? { format: field.format } : {});
    case 'enum':
      return type('string', { enum: field.nullable ? [...field.values, null] : [...field.values] });
    case 'integer':
      return type('integer');
    case 'money':
      return type('number');
    case 'time':
      return type('string', { format: 'date-time' });
    case 'boolean':
      return type('boolean');
    case 'list':
      return type('array', { items: listItems(field.items) });
    case 'secret':
      return type('string');
  }
}

/** What a list holds: integers in a range, values of an enum, or non-empty strings up to a length. */
export type ListItems = { minimum: number; maximum: number } | { values: readonly string[] } | { maxLength: number };

function listItems(items: ListItems): Record<string, unknown> {
  if ('values' in items) return { type: 'string', enum: [...items.values] };
  if ('maxLength' in items) return { type: 'string', minLength: 1, maxLength: items.maxLength };
  return { type: 'integer', minimum: items.minimum, maximum: items.maximum };
}

function moneyMessage(name: string, field: { minimum: number; maximum: number }): string {
  return `${name} must be a number from ${field.minimum} to ${field.maximum} with at most 2 decimals`;
}

/** Checks JSON Schema cannot express exactly (money has at most 2 decimals). */
export function fieldErrors(name: string, field: Field, value: unknown): ErrorDetail[] {
  if (field.kind === 'money' && typeof value === 'number') {
    const cents = value * 100;
    if (Math.abs(cents - Math.round(cents)) > 1e-6) return [{ param: name, code: 'invalid_amount', message: moneyMessage(name, field) }];
  }
  return [];
}

/** A JSON value (already validated) to its column value. */
export function toColumn(field: Field, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (field.kind) {
    case 'money':
      return Math.round((value as number) * 100);
    case 'time':
      return parseTime(value as string);
    case 'boolean':
      return value ? 1 : 0;
    case 'list':
      return JSON.stringify(value);
    default:
      return value;
  }
}

/** A column value to its JSON value. */
export function toJsonValue(field: Field, value: unknown): unknown {
  if (field.kind === 'list') return value === null || value === undefined ? [] : (JSON.parse(String(value)) as string[]);
  if (value === null || value === undefined) return null;
  switch (field.kind) {
    case 'money':
      return Math.round(Number(value)) / 100;
    case 'time':
      return isoTime(Number(value));
    case 'boolean':
      return Number(value) === 1;
    case 'integer':
      return Number(value);
    default:
      return value;
  }
}

// Constructors that keep the descriptions short.
type Opts = Omit<Common, 'description' | 'example'>;
export const text = (
  description: string,
  example: unknown,
  maxLength: number,
  opts: Opts & { format?: 'email' | 'uri' | 'date'; pattern?: string } = {},
): Field => ({
  kind: 'text',
  description,
  example,
  maxLength,
  ...opts,
});
export const oneOf = (description: string, values: readonly string[], opts: Opts = {}): Field => ({
  kind: 'enum',
  description,
  example: values[0],
  values,
  ...opts,
});
export const integer = (description: string, example: number, minimum: number, maximum: number, opts: Opts = {}): Field => ({
  kind: 'integer',
  description,
  example,
  minimum,
  maximum,
  ...opts,
});
export const money = (description: string, example: number, opts: Opts & { minimum?: number; maximum?: number } = {}): Field => ({
  kind: 'money',
  description,
  example,
  minimum: 0,
  maximum: 1_000_000_000,
  ...opts,
});
export const time = (description: string, example: string, opts: Opts = {}): Field => ({ kind: 'time', description, example, ...opts });
export const boolean = (description: string, example: boolean, opts: Opts = {}): Field => ({ kind: 'boolean', description, example, ...opts });
export const list = (description: string, example: unknown[], items: ListItems, maxItems: number, opts: Opts = {}): Field => ({
  kind: 'list',
  description,
  example,
  items,
  maxItems,
  ...opts,
});
export const secret = (description: string, prefix: string): Field => ({ kind: 'secret', description, example: `${prefix}3kTq9…`, prefix });
