import type { ValidateFunction } from 'ajv';
import type { ScopeResource } from '../shops/scopes.js';
import type { SelectQueryBuilder } from 'kysely';
import { Type, type TProperties, type TSchema } from 'typebox';
import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { compileValidator, showError, toFieldErrors, type FieldError } from '../core/validation.js';
import { isoTime } from '../clock.js';
import type { RecordEffects } from './effects.js';
import { CUSTOMER_IDENTIFIER, identifierErrors, identifierSchema } from './customer-identifier.js';
import { fieldErrors, inputSchema, outputSchema, toColumn, toJsonValue, type Field, type Fields, type Row } from './fields.js';

// One description per resource: fields, ID column, sortable fields and write mode. Routes,
// schemas, OpenAPI, import and the shared tests all follow from it.

export type { Row };

/**
 * How a resource is written:
 * - upsert: synced from the commerce platform, `PUT /{path}/{remote_id}`;
 * - create: `POST /{path}` only (an append-only log such as billing attempts);
 * - crud: native records, `POST /{path}`, `PATCH /{path}/{id}`, `DELETE /{path}/{id}`;
 * - programme: native records the programme writes through routes of its own (referrals:
 *   POST /referrals and its complete and cancel); the generic routes only read them.
 */
export type WriteMode = 'upsert' | 'create' | 'crud' | 'programme';

export interface Resource {
  /** The table; also the resource's name in the CLI (`loyalty import orders …`). */
  table: string;
  /** The path under /merchant_api/v1. */
  path: string;
  /** One record, in messages: "No order with id 12". */
  singular: string;
  /** The record schema's $id and title. */
  title: string;
  /** Several records, in summaries: "List orders". */
  plural: string;
  /** The OpenAPI tag; one of TAGS in http/openapi.ts. */
  tag: string;
  /** What its routes need: `<scope>:read` to read, `<scope>:write` to write (shops/scopes.ts). */
  scope: ScopeResource;
  /** The record schema's description in the OpenAPI document, when the fields do not say it all. */
  description?: string;
  /** What moves updated_at, when more than the record's own fields (customers: balances, tier). */
  updatedAt?: string;
  /** remote_id for records synced from the platform, id for native ones. */
  id: 'remote_id' | 'id';
  write: WriteMode;
  fields: Fields;
  /** What its writes do beyond its table (effects.ts). */
  effects?: RecordEffects;
  /** Fields shown but not stored, computed for a page of rows at once (customers' balances). */
  computed?: {
    /** The stored columns they are computed from, read with every shown row. */
    columns?: readonly string[];
    schema: TProperties;
    /** `config` is the deployment's, where the caller has it (a connection's ingest_url reads PUBLIC_URL). */
    of(db: DB, shopId: number, rows: Row[], now: number, config?: Config): Promise<Row[]>;
  };
  /** How GET /{path}/{param} finds a record when it is not just by ID (customers: also by e-mail). */
  lookup?: { param: string; description: string; examples: string[]; find(db: DB, shopId: number, text: string): Promise<Row | undefined> };
  /**
   * Rules across fields, checked on the record as it will be stored (after a PATCH merges).
   * They run when every field in `reads` is valid, so they never judge a value that failed.
   * `config` is the deployment's, for the rules it changes (WEBHOOK_ALLOW_PRIVATE_URLS).
   */
  check?: RecordCheck | readonly RecordCheck[];
  /**
   * Fills the columns that stand for one another from those a write gives (a webhook's topic
   * and topics), before the rules and the write; `values` holds the columns of what the body
   * gave (a PATCH: only the fields it sends).
   */
  complete?(values: Row): void;
  /**
   * At most one record of the shop holds a value of `field` while `when` holds (one enabled
   * earning rule per kind); a partial unique index settles racing writes.
   */
  exclusive?: Exclusive | readonly Exclusive[];
  /**
   * List filters, by query parameter: the schema documents and parses the value (http/query.ts),
   * `apply` narrows the list's query. A filtered list is counted, not read from shop_counts.
   */
  filters?: Readonly<Record<string, ListFilter>>;
  /** Further sorts, by sort[order_type] value → column (each with an index on (shop_id, column, ID)). */
  sorts?: Readonly<Record<string, string>>;
}

/** One exclusive value (Resource.exclusive); `except` names values of `field` that many records may hold (ways to earn are many per kind). */
export interface Exclusive {
  field: string;
  when: { field: string; value: unknown };
  except?: readonly string[];
  code: string;
  message: string;
}

/** A resource's exclusive rules, as a list. */
export const exclusivesOf = (r: Resource): readonly Exclusive[] => (r.exclusive === undefined ? [] : 'field' in r.exclusive ? [r.exclusive] : r.exclusive);

/** One cross-field rule, and the fields it reads (it runs only when they are all valid). */
export interface RecordCheck {
  reads: readonly string[];
  rule(record: Row, config: Config): ErrorDetail[];
}

export interface ListFilter {
  schema: TSchema;
  apply(query: SelectQueryBuilder<any, any, Row>, value: number | string): SelectQueryBuilder<any, any, Row>;
}

/** Every resource also sorts by its ID, created_at and updated_at. */
export const SYSTEM_SORTS = ['created_at', 'updated_at'] as const;

export interface Derived {
  record: TSchema;
  /** The create response when the resource has a secret (shown that once). */
  created: TSchema;
  input: TSchema;
  patch: TSchema;
  /** sort[order_type] value → column. */
  sortable: Record<string, string>;
  validateInput: ValidateFunction;
}

const derived = new WeakMap<Resource, Derived>();

const entries = (r: Resource) => Object.entries(r.fields);

function example(r: Resource): Row {
  return Object.fromEntries(
    entries(r)
      .filter(([, f]) => f.kind !== 'secret' && !f.readOnly && (f.required || f.example !== undefined))
      .map(([n, f]) => [n, f.example]),
  );
}

/**
 * A body's fields: those a request writes, each followed by customer_identifier when it may
 * stand for it. `whole` (create, PUT) requires the required ones; one that customer_identifier
 * may stand for is required in code instead (identifierErrors), as either does.
 */
function inputProperties(r: Resource, whole: boolean): TProperties {
  const props: TProperties = {};
  for (const [name, field] of entries(r)) {
    if (field.kind === 'secret' || field.readOnly) continue;
    const inCode = field.customerIdentifier || field.alias !== undefined;
    props[name] = whole && field.required && !inCode ? inputSchema(name, field) : Type.Optional(inputSchema(name, field));
    if (field.alias !== undefined) props[field.alias] = Type.Optional(inputSchema(field.alias, { ...field, description: `Alias of ${name}` }));
    if (!field.customerIdentifier) continue;
    if (field.kind !== 'integer' || CUSTOMER_IDENTIFIER in props)
      throw new Error(`${r.table}.${name}: customer_identifier stands for one integer field (a remote_id)`);
    props[CUSTOMER_IDENTIFIER] = Type.Optional(identifierSchema(name, field));
  }
  return props;
}

/** The schemas and lookups that follow from a description, built once. */
export function derive(r: Resource): Derived {
  let d = derived.get(r);
  if (d !== undefined) return d;
  const idSchema = Type.Integer({
    description: r.id === 'remote_id' ? `The ${r.singular}'s ID in the commerce platform` : `The ${r.singular}'s ID`,
    examples: [r.id === 'remote_id' ? 7012345678 : 42],
  });
  const shown: TProperties = {};
  const secrets: TProperties = {};
  for (const [name, field] of entries(r)) {
    if (field.writeOnly) continue;
    (field.kind === 'secret' ? secrets : shown)[name] = outputSchema(field);
    if (field.alias !== undefined) shown[field.alias] = outputSchema({ ...field, description: `Alias of ${name}` });
  }
  const times = {
    created_at: Type.String({ format: 'date-time', description: 'When this record was created here' }),
    updated_at: Type.String({ format: 'date-time', description: r.updatedAt ?? 'When this record last changed here' }),
  };
  const recordProps = { [r.id]: idSchema, ...shown, ...(r.computed?.schema ?? {}), ...times };
  // A create and an update take the same fields: one title names them once in the OpenAPI
  // document, where each body adds what it requires (http/openapi-components.ts).
  const fields = r.write === 'crud' ? { title: `${r.title}Fields` } : {};
  // The body's example is its fields' examples, which the reference composes itself.
  const input = Type.Object(inputProperties(r, true), { ...fields, additionalProperties: false });
  const patch = Type.Object(inputProperties(r, false), {
    ...fields,
    additionalProperties: false,
    minProperties: 1,
    examples: [Object.fromEntries(Object.entries(example(r)).slice(0, 1))],
  });
  const sortable: Record<string, string> = {};
  for (const [name, field] of entries(r)) {
    if (!field.sortable) continue;
    if (field.nullable) throw new Error(`${r.table}.${name}: a sortable field must not be nullable (NULL order differs between databases)`);
    sortable[name] = name;
    if (field.alias !== undefined) sortable[field.alias] = name;
  }
  for (const name of SYSTEM_SORTS) sortable[name] = name;
  Object.assign(sortable, r.sorts);
  const record = Type.Object(recordProps, { $id: r.title, title: r.title, ...(r.description ? { description: r.description } : {}) });
  d = {
    record,
    created: Object.keys(secrets).length
      ? Type.Object(
          { ...recordProps, ...secrets },
          { $id: `${r.title}Created`, title: `${r.title}Created`, description: `The new ${r.singular}, with its secret shown this once` },
        )
      : record,
    input,
    patch,
    sortable,
    validateInput: compileValidator(input),
  };
  derived.set(r, d);
  return d;
}

// Field lists per resource, made once: recordJson runs for every row of every page.
interface FieldLists {
  shown: [string, Field][];
  /** The fields a request writes or the programme sets: the shown ones and the write-only ones. */
  stored: [string, Field][];
  all: [string, Field][];
  /** The fields with an alias (aliasErrors runs for every imported row). */
  aliased: [string, Field & { alias: string }][];
  /** The columns recordJson reads for a shown record: its ID, shown fields and times. */
  shownColumns: string[];
}
const fieldListsOf = new WeakMap<Resource, FieldLists>();

function fieldLists(r: Resource): FieldLists {
  let lists = fieldListsOf.get(r);
  if (lists === undefined) {
    const stored = entries(r).filter(([, f]) => f.kind !== 'secret');
    const shown = stored.filter(([, f]) => !f.writeOnly);
    const computedColumns = (r.computed?.columns ?? []).filter((c) => c !== r.id);
    const aliased = entries(r).filter((entry): entry is [string, Field & { alias: string }] => entry[1].alias !== undefined);
    lists = { shown, stored, all: entries(r), aliased, shownColumns: [r.id, ...shown.map(([name]) => name), ...computedColumns, 'created_at', 'updated_at'] };
    fieldListsOf.set(r, lists);
  }
  return lists;
}

/** What a query must select for recordJson without secrets (every value read costs a conversion into JS). */
export function shownColumns(r: Resource): readonly string[] {
  return fieldLists(r).shownColumns;
}

/** The record as stored → as shown (without computed fields); secrets only when asked. */
export function recordJson(r: Resource, row: Row, withSecrets = false): Row {
  return withSecrets ? recordLoop(r, row, fieldLists(r).all) : shownMaker(r)(row);
}

type RecordMaker = (row: Row) => Row;
const shownMakers = new WeakMap<Resource, RecordMaker>();

/**
 * recordJson without secrets as a function made from the resource's fields, that builds the
 * record as one object literal: the same properties in the same order, each converted as
 * toJsonValue does (text, enums and the like as they are, integers by Number, times by isoTime,
 * the other kinds by toJsonValue itself). A page of 250 customers built its records property by
 * property through toJsonValue's switch in 156 µs, as literals in ~60 µs (a microbenchmark),
 * and V8 makes each record at once in its final shape.
 */
function shownMaker(r: Resource): RecordMaker {
  let make = shownMakers.get(r);
  if (make !== undefined) return make;
  const { shown } = fieldLists(r);
  const names = [r.id, 'created_at', 'updated_at', ...shown.flatMap(([name, field]) => (field.alias === undefined ? [name] : [name, field.alias]))];
  // __proto__ in a literal would set the prototype instead of a property (never a field's name).
  if (names.includes('__proto__')) {
    make = (row) => recordLoop(r, row, shown);
  } else {
    const key = JSON.stringify;
    const lines: string[] = [];
    const props: string[] = [`${key(r.id)}: Number(row[${key(r.id)}])`];
    shown.forEach(([name, field], i) => {
      const value = `row[${key(name)}]`;
      const converted =
        field.kind === 'text' || field.kind === 'enum' || field.kind === 'secret'
          ? `${value} ?? null`
          : field.kind === 'integer'
            ? `(x = ${value}) === null || x === undefined ? null : Number(x)`
            : field.kind === 'time'
              ? `(x = ${value}) === null || x === undefined ? null : isoTime(Number(x))`
              : `toJsonValue(fields[${i}][1], ${value})`;
      lines.push(`const v${i} = ${converted};`);
      props.push(`${key(name)}: v${i}`);
      if (field.alias !== undefined) props.push(`${key(field.alias)}: v${i}`);
    });
    props.push(`"created_at": isoTime(row.created_at ?? null)`, `"updated_at": isoTime(row.updated_at ?? null)`);
    const body = `return (row) => { let x; ${lines.join(' ')} return { ${props.join(', ')} }; };`;
    make = new Function('fields', 'toJsonValue', 'isoTime', body)(shown, toJsonValue, isoTime) as RecordMaker;
  }
  shownMakers.set(r, make);
  return make;
}

/** recordJson of these fields, property by property. */
function recordLoop(r: Resource, row: Row, fields: readonly [string, Field][]): Row {
  const out: Row = { [r.id]: Number(row[r.id]) };
  for (let i = 0; i < fields.length; i++) {
    const [name, field] = fields[i]!;
    out[name] = toJsonValue(field, row[name]);
    if (field.alias !== undefined) out[field.alias] = out[name];
  }
  out.created_at = isoTime((row.created_at ?? null) as number | null);
  out.updated_at = isoTime((row.updated_at ?? null) as number | null);
  return out;
}

/** A page of rows → records, computed fields included. */
export async function recordsJson(db: DB, shopId: number, r: Resource, rows: Row[], now: number, config?: Config): Promise<Row[]> {
  const make = shownMaker(r);
  const out = new Array<Row>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = make(rows[i]!);
  if (r.computed && rows.length > 0) {
    // The serialiser writes properties in schema order, so adding them last is fine.
    const extra = await r.computed.of(db, shopId, rows, now, config);
    for (let i = 0; i < out.length; i++) Object.assign(out[i]!, extra[i]);
  }
  return out;
}

/**
 * Column values for a validated body. `full` (create, PUT) fills every field: left-out ones
 * get their default on create, null otherwise; a PATCH sets only what it names.
 */
export function columnsOf(r: Resource, body: Row, mode: 'create' | 'replace' | 'patch', now: number): Row {
  const out: Row = {};
  for (const [name, field] of fieldLists(r).stored) {
    // Read-only fields are the programme's: a create gives them their default, nothing clears them.
    if (field.readOnly) {
      if (mode === 'create' && field.default !== undefined) out[name] = field.default === 'now' ? now : toColumn(field, field.default);
      continue;
    }
    if (name in body) out[name] = toColumn(field, body[name]);
    // A PUT replaces the record: what it leaves out is cleared, to its default when it has one.
    else if (mode !== 'patch' && field.default !== undefined) out[name] = field.default === 'now' ? now : toColumn(field, field.default);
    else if (mode !== 'patch') out[name] = null;
  }
  r.complete?.(out);
  return out;
}

/** A body judged field by field, before the cross-field check and the database. */
export interface BodyCheck {
  /** The schema's errors, then those of the rules of each field that passed it. */
  errors: ErrorDetail[];
  /** Fields that failed either: no later rule reads them. */
  invalid: ReadonlySet<string>;
  /** The body without its failing fields; null when the body is not an object at all. */
  valid: Row | null;
}

/**
 * Runs the rules JSON Schema cannot express (money decimals, customer_identifier) on every
 * field that passed its schema, so that every failing field is reported at once, not only the
 * schema's. `whole` is a body that must hold the required fields (create, PUT), not a PATCH.
 */
export function checkFields(r: Resource, body: unknown, schemaErrors: readonly FieldError[], whole: boolean): BodyCheck {
  const errors = schemaErrors.map((e) => showError(e));
  if (typeof body !== 'object' || body === null || Array.isArray(body) || schemaErrors.some((e) => e.field === '' && e.below === undefined)) {
    return { errors, invalid: new Set(), valid: null };
  }
  // A failure below a field (`tags[2]`) marks the field (`tags`).
  const invalid = new Set(schemaErrors.map((e) => e.field));
  for (const [name, value] of Object.entries(body)) {
    if (invalid.has(name) || !Object.hasOwn(r.fields, name)) continue;
    const failed = fieldErrors(name, r.fields[name]!, value);
    if (failed.length > 0) {
      errors.push(...failed);
      invalid.add(name);
    }
  }
  errors.push(...identifierErrors(r.fields, body as Row, invalid, whole));
  const valid = invalid.size === 0 ? (body as Row) : Object.fromEntries(Object.entries(body).filter(([name]) => !invalid.has(name)));
  errors.push(...aliasErrors(r, valid, invalid, whole));
  return { errors, invalid, valid };
}

/**
 * A field given by its alias is written as the field itself (in `valid`, which loses the
 * alias); both given must be equal; a whole body gives a required one by either name.
 */
function aliasErrors(r: Resource, valid: Row, invalid: Set<string>, whole: boolean): ErrorDetail[] {
  const errors: ErrorDetail[] = [];
  for (const [name, field] of fieldLists(r).aliased) {
    const alias = field.alias;
    if (alias in valid && name in valid && valid[alias] !== valid[name]) {
      errors.push({ param: alias, code: 'conflicting_parameters', message: `${alias} and ${name} are the same field: give one, or both equal` });
      invalid.add(alias);
    } else if (alias in valid && !invalid.has(name)) valid[name] = valid[alias];
    else if (whole && field.required && !(name in valid) && !invalid.has(name) && !invalid.has(alias)) {
      errors.push({ param: name, code: 'missing', message: `give ${name} or ${alias}` });
      invalid.add(name);
    }
    delete valid[alias];
  }
  return errors;
}

/** The resource's cross-field rules on the record as it will be stored, when what they read is valid. */
export function recordErrors(r: Resource, stored: Row, invalid: ReadonlySet<string>, config: Config): ErrorDetail[] {
  const checks: readonly RecordCheck[] = r.check === undefined ? [] : 'rule' in r.check ? [r.check] : r.check;
  return checks.filter((c) => !c.reads.some((name) => invalid.has(name))).flatMap((c) => c.rule(stored, config));
}

/** The same validation a PUT body gets, for one imported row: every field's errors at once. */
export function validateImported(r: Resource, body: Row, config: Config): ErrorDetail[] {
  const d = derive(r);
  const checked = checkFields(r, body, d.validateInput(body) ? [] : toFieldErrors(d.validateInput.errors ?? []), true);
  if (checked.valid === null) return checked.errors;
  return [...checked.errors, ...recordErrors(r, columnsOf(r, checked.valid, 'replace', 0), checked.invalid, config)];
}
