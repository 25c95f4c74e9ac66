import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import type { FieldError } from '../core/validation.js';
import { isUniqueViolation } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { AppError, notFound, validationError, type ErrorDetail } from '../errors.js';
import { conflicts, lostRaceErrors, type Candidate } from './conflicts.js';
import { identifierFailed, resolveIdentifiers } from './customer-identifier.js';
import type { Prior, WrittenRecord } from './effects.js';
import { announceUpsert, enqueueRecordEvents } from './events.js';
import { deleteRecord, findRecord, insertRecord, insertRecords, putRecord, updateRecord, upsertStored } from './repository.js';
import { checkFields, columnsOf, recordErrors, recordJson, recordsJson, type BodyCheck, type Resource, type Row } from './resource.js';

// The one way to write records, for the routes, import and the demo alike: a checked body
// becomes column values, the write is checked (cross-field rules, unique values, references)
// and made, and what it announces goes to the outbox in the same transaction (events.ts). A
// write that loses a race for a unique value is reported as the check would have (`raced`).

/** Who writes, and when: the caller's shop, clock and deployment settings. */
export interface Writer {
  shopId: number;
  now: number;
  config: Config;
  /** False for `loyalty import --no-earn`: records are stored, and earn nothing (effects.ts). */
  earn?: boolean;
}

export type CheckedBody = BodyCheck & { valid: Row };

/**
 * The body's schema errors and the rules of the fields that passed it. Only a body that is not
 * an object at all is refused here. `whole`: a create or PUT body, which holds the required fields.
 */
export function checkedBody(r: Resource, body: unknown, schemaErrors: readonly FieldError[], whole: boolean): CheckedBody {
  const checked = checkFields(r, body, schemaErrors, whole);
  if (checked.valid !== null) return checked as CheckedBody;
  throw validationError(checked.errors.length > 0 ? checked.errors : [{ param: 'body', code: 'invalid_type', message: 'the request body must be an object' }]);
}

/** A missing record: the body's own errors, when it has any, are told first. */
function refuse(checked: CheckedBody, error: AppError): AppError {
  return checked.errors.length > 0 ? validationError(checked.errors) : error;
}

/**
 * The body with its customer_identifier resolved into the field it stands for (a remote_id),
 * or failed: then the field, when the body did not give it too, counts as failed with it.
 */
async function withCustomer(trx: DB, shopId: number, r: Resource, checked: CheckedBody): Promise<CheckedBody> {
  const { bodies, errors } = await resolveIdentifiers(trx, shopId, r.fields, [checked.valid]);
  const failed = errors.get(0);
  if (failed === undefined) return { ...checked, valid: bodies[0]! };
  const invalid = new Set(checked.invalid);
  identifierFailed(r.fields, checked.valid, invalid);
  return { errors: [...checked.errors, ...failed], invalid, valid: checked.valid };
}

/** The column values of the body's valid fields; a failing field is left out, not defaulted. */
function valuesOf(r: Resource, checked: CheckedBody, mode: 'create' | 'replace' | 'patch', now: number): Row {
  const values = columnsOf(r, checked.valid, mode, now);
  for (const name of checked.invalid) delete values[name];
  return values;
}

/** A candidate's write failed on a unique index: another writer took a value after the check. */
class LostRace extends Error {
  constructor(
    readonly candidate: Candidate,
    cause: unknown,
  ) {
    super('a concurrent write took a unique value', { cause });
  }
}

interface CheckedWrite<T> {
  resource: Resource;
  checked: CheckedBody;
  /** The record as it will be stored (a PATCH: merged with the stored one), for the cross-field rules. */
  stored: Row;
  candidate: Candidate;
  write: () => Promise<T>;
}

/**
 * Checks a write, then makes it. Every error is reported at once: the body's fields, the
 * cross-field rules once what they read is valid, and the database's rules (unique values,
 * references) on the valid fields. A unique index that fails the write all the same becomes a
 * LostRace, which `raced` reports once the transaction is over.
 */
async function checkedWrite<T>(trx: DB, w: Writer, { resource: r, checked, stored, candidate: given, write }: CheckedWrite<T>): Promise<T> {
  const candidate = { ...given, merged: stored };
  const errors: ErrorDetail[] = [...checked.errors, ...recordErrors(r, stored, checked.invalid, w.config)];
  errors.push(...((await conflicts(trx, w.shopId, r, [candidate])).get(0) ?? []));
  if (errors.length > 0) throw validationError(errors);
  return write().catch((error: unknown) => {
    throw isUniqueViolation(error) ? new LostRace(candidate, error) : error;
  });
}

/**
 * For the catch of the whole write, after its transaction rolled back: two writers raced for a
 * unique value and this one lost. Reports the fields that clash, as the precheck would have.
 */
export async function raced(db: DB, shopId: number, r: Resource, error: unknown): Promise<never> {
  if (!(error instanceof LostRace)) throw error;
  throw validationError(await lostRaceErrors(db, shopId, r, error.candidate));
}

const NO_PRIOR: Prior = new Map();

/** What the resource's effects read of these records before they are written. */
async function priorOf(trx: DB, w: Writer, r: Resource, ids: readonly number[]): Promise<Prior> {
  return ids.length === 0 || r.effects?.prior === undefined ? NO_PRIOR : r.effects.prior(trx, w.shopId, ids);
}

/** The resource's effects of records just written (resource.effects). */
async function written(trx: DB, w: Writer, r: Resource, records: readonly WrittenRecord[], prior: Prior = NO_PRIOR): Promise<void> {
  if (records.length > 0) await r.effects?.written?.(trx, w, records, prior);
}

/** The record as the API shows it. */
async function shown(trx: DB, w: Writer, r: Resource, row: Row): Promise<Row> {
  return (await recordsJson(trx, w.shopId, r, [row], w.now, w.config))[0]!;
}

/** Creates or replaces a synced record by remote_id (PUT); returns it as shown. */
export async function replaceRecord(trx: DB, w: Writer, r: Resource, remoteId: number, body: CheckedBody): Promise<{ created: boolean; record: Row }> {
  const checked = await withCustomer(trx, w.shopId, r, body);
  const values = valuesOf(r, checked, 'replace', w.now);
  const prior = await priorOf(trx, w, r, [remoteId]);
  const write = () => putRecord(trx, w.shopId, r, remoteId, values, w.now);
  const { created, changed } = await checkedWrite(trx, w, { resource: r, checked, stored: values, candidate: { id: remoteId, values }, write });
  await written(trx, w, r, [{ id: remoteId, created, values }], prior);
  const record = await shown(trx, w, r, (await findRecord(trx, w.shopId, r, remoteId))!);
  // A PUT that changes nothing announces nothing.
  if (changed) await enqueueRecordEvents(trx, w.shopId, r, [{ created, record }], w.now);
  return { created, record };
}

function generateSecrets(r: Resource): Row {
  const out: Row = {};
  for (const [name, field] of Object.entries(r.fields)) if (field.kind === 'secret') out[name] = `${field.prefix}${randomBytes(24).toString('base64url')}`;
  return out;
}

function pickSecrets(r: Resource, row: Row): Row {
  const all = recordJson(r, row, true);
  return Object.fromEntries(
    Object.entries(r.fields)
      .filter(([, f]) => f.kind === 'secret')
      .map(([name]) => [name, all[name]]),
  );
}

/** Creates a native record (POST); returns it as shown, with its secrets this once. */
export async function createRecord(trx: DB, w: Writer, r: Resource, body: CheckedBody): Promise<Row> {
  const checked = await withCustomer(trx, w.shopId, r, body);
  const values = valuesOf(r, checked, 'create', w.now);
  const write = () => insertRecord(trx, w.shopId, r, { ...values, ...generateSecrets(r) }, w.now);
  const row = await checkedWrite(trx, w, { resource: r, checked, stored: values, candidate: { id: null, values }, write });
  await written(trx, w, r, [{ id: Number(row[r.id]), created: true, values: row }]);
  const record = await shown(trx, w, r, row);
  await enqueueRecordEvents(trx, w.shopId, r, [{ created: true, record }], w.now);
  return { ...record, ...pickSecrets(r, row) };
}

/** Changes the fields a PATCH sends; `id` null (a path ID that is none) or unknown is not_found for `text`. */
export async function patchRecord(trx: DB, w: Writer, r: Resource, id: number | null, text: string, body: CheckedBody): Promise<Row> {
  const existing = id === null ? undefined : await findRecord(trx, w.shopId, r, id);
  if (id === null || existing === undefined) throw refuse(body, notFound(r.singular, text));
  const checked = await withCustomer(trx, w.shopId, r, body);
  const values = valuesOf(r, checked, 'patch', w.now);
  // A PATCH that changes nothing leaves the record, and its updated_at, as they are.
  const write = async () => (await updateRecord(trx, w.shopId, r, id, values, w.now)) ?? existing;
  const row = await checkedWrite(trx, w, { resource: r, checked, stored: { ...existing, ...values }, candidate: { id, values }, write });
  await written(trx, w, r, [{ id, created: false, values: row! }]);
  const record = await shown(trx, w, r, row!);
  await enqueueRecordEvents(trx, w.shopId, r, [{ created: false, record }], w.now);
  return record;
}

/** Deletes a native record for good; not_found for `text` when there is none. */
export async function removeRecord(trx: DB, shopId: number, r: Resource, id: number | null, text: string): Promise<{ id: number; deleted: true }> {
  if (id === null || !(await deleteRecord(trx, shopId, r, id))) throw notFound(r.singular, text);
  await r.effects?.removed?.(trx, shopId);
  return { id, deleted: true };
}

/**
 * Sets the columns the resource's effects give new records (effects.created) on `rows`: their
 * values on those that do not exist yet, null on the others (an upsert leaves those columns of a
 * stored record alone). Returns the columns.
 */
async function withCreatedColumns(trx: DB, w: Writer, r: Resource, rows: Row[], existed: ReadonlySet<number>): Promise<string[]> {
  if (r.effects?.created === undefined || rows.length === 0) return [];
  const fresh = rows.filter((row) => !existed.has(row.remote_id as number));
  const columns = await r.effects.created(trx, w, fresh);
  const names = Object.keys(columns);
  for (const row of rows) for (const name of names) row[name] = null;
  fresh.forEach((row, k) => {
    for (const name of names) row[name] = columns[name]![k];
  });
  return names;
}

/**
 * Upserts many synced records by remote_id (import, demo): each candidate holds checked values
 * and no remote_id twice. Those that break a database rule (a unique value, a reference) are
 * left out and returned by index with their errors; the others are written and announced.
 */
export async function upsertMany(trx: DB, w: Writer, r: Resource, candidates: readonly { id: number; values: Row }[]): Promise<Map<number, ErrorDetail[]>> {
  const errors = await conflicts(trx, w.shopId, r, [...candidates]);
  // Each row as it is stored, built once (a copy per step cost an import of 1,000,000 customers
  // a second of its writing thread, and as much again in garbage collection).
  const good: (Row & { remote_id: number })[] = [];
  const ids: number[] = [];
  candidates.forEach((c, i) => {
    if (errors.has(i)) return;
    good.push({ shop_id: w.shopId, remote_id: c.id, ...c.values, created_at: w.now, updated_at: w.now });
    ids.push(c.id);
  });
  const announce = await announceUpsert(trx, w.shopId, r, ids, w.now);
  const prior = await priorOf(trx, w, r, ids);
  const existed = new Set(prior.keys());
  const insertOnly = await withCreatedColumns(trx, w, r, good, existed);
  await upsertStored(trx, r, good, insertOnly);
  await written(
    trx,
    w,
    r,
    good.map((row) => ({ id: row.remote_id, created: !existed.has(row.remote_id), values: row })),
    prior,
  );
  await announce();
  return errors;
}

/**
 * Creates many native records (demo) from checked values. Those that break a database rule are
 * left out and returned by index with their errors; the others are written and announced.
 */
export async function createMany(trx: DB, w: Writer, r: Resource, rows: readonly Row[]): Promise<Map<number, ErrorDetail[]>> {
  const errors = await conflicts(
    trx,
    w.shopId,
    r,
    rows.map((values) => ({ id: null, values })),
  );
  const good = rows.filter((_, i) => !errors.has(i)).map((values) => ({ ...values, ...generateSecrets(r) }));
  const ids = await insertRecords(trx, w.shopId, r, good, w.now);
  await written(
    trx,
    w,
    r,
    ids.map((id, i) => ({ id, created: true, values: good[i]! })),
  );
  if (ids.length > 0) {
    const stored: Row[] = [];
    for (const id of ids) stored.push((await findRecord(trx, w.shopId, r, id))!);
    const records = await recordsJson(trx, w.shopId, r, stored, w.now);
    await enqueueRecordEvents(
      trx,
      w.shopId,
      r,
      records.map((record) => ({ created: true, record })),
      w.now,
    );
  }
  return errors;
}
