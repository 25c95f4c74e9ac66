import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import { isUniqueViolation } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import type { Config } from '../config.js';
import { AppError, notFound, validationError, type ErrorDetail } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { attachedErrors } from '../http/validation.js';
import { conflicts, lostRaceErrors, type Candidate } from './conflicts.js';
import { cursorRecords, deleteRecord, findRecord, insertRecord, putRecord, selectRecords, updateRecord } from './repository.js';
import { checkFields, columnsOf, derive, recordErrors, recordJson, recordsJson, type BodyCheck, type Resource, type Row } from './resource.js';
import { RESOURCES } from './resources/index.js';
import { enqueueRecordEvents } from './events.js';

// The routes of every record resource, generated from its description. Each route below is
// registered explicitly per resource: grep for `/${r.path}`.

const Deleted = Type.Object(
  { id: Type.Integer({ examples: [42] }), deleted: Type.Literal(true) },
  { $id: 'DeletedRecord', title: 'DeletedRecord', description: 'What DELETE answers: the record is gone for good' },
);

/** A path ID: a positive integer below 2^53, else null. */
const pathId = (text: string) => parseRemoteId(text);

type CheckedBody = BodyCheck & { valid: Row };

/**
 * The body's schema errors (write routes validate with attachValidation) and the rules of the
 * fields that passed it. Only a body that is not an object at all is refused here.
 */
function checkedBody(r: Resource, request: FastifyRequest): CheckedBody {
  const checked = checkFields(r, request.body, attachedErrors(request));
  if (checked.valid !== null) return checked as CheckedBody;
  throw validationError(checked.errors.length > 0 ? checked.errors : [{ param: 'body', code: 'invalid_type', message: 'the request body must be an object' }]);
}

/** The column values of the body's valid fields; a failing field is left out, not defaulted. */
function valuesOf(r: Resource, checked: CheckedBody, mode: 'create' | 'replace' | 'patch', now: number): Row {
  const values = columnsOf(r, checked.valid, mode, now);
  for (const name of checked.invalid) delete values[name];
  return values;
}

/** A bad path ID or a missing record: the body's own errors, when it has any, are told first. */
function refuse(checked: CheckedBody, error: AppError): AppError {
  return checked.errors.length > 0 ? validationError(checked.errors) : error;
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

/**
 * Checks a write, then makes it. Every error is reported at once: the body's fields, the
 * cross-field rules once what they read is valid, and the database's rules (unique values,
 * references) on the valid fields. A unique index that fails the write all the same becomes a
 * LostRace, which `raced` reports once the transaction is over.
 */
async function checkedWrite<T>(
  trx: DB,
  config: Config,
  shopId: number,
  r: Resource,
  checked: CheckedBody,
  stored: Row,
  candidate: Candidate,
  write: () => Promise<T>,
): Promise<T> {
  const errors: ErrorDetail[] = [...checked.errors, ...recordErrors(r, stored, checked.invalid, config)];
  errors.push(...((await conflicts(trx, shopId, r, [candidate])).get(0) ?? []));
  if (errors.length > 0) throw validationError(errors);
  return write().catch((error: unknown) => {
    throw isUniqueViolation(error) ? new LostRace(candidate, error) : error;
  });
}

/**
 * For the catch of the whole write, after its transaction rolled back: two writers raced for a
 * unique value and this one lost. Reports the fields that clash, as the precheck would have.
 */
async function raced(db: DB, shopId: number, r: Resource, error: unknown): Promise<never> {
  if (!(error instanceof LostRace)) throw error;
  throw validationError(await lostRaceErrors(db, shopId, r, error.candidate));
}

function generateSecrets(r: Resource): Row {
  const out: Row = {};
  for (const [name, field] of Object.entries(r.fields)) if (field.kind === 'secret') out[name] = `${field.prefix}${randomBytes(24).toString('base64url')}`;
  return out;
}

export function registerRecordRoutes(app: FastifyInstance, resources: readonly Resource[] = RESOURCES): void {
  for (const r of resources) {
    const d = derive(r);
    const plural = r.plural;
    const tags = [r.tag];
    const IdParams = Type.Object({ [r.id]: Type.String({ description: `The ${r.singular}'s ${r.id}`, examples: ['42'] }) });
    const json = (db: DB, shopId: number, rows: Row[]) => recordsJson(db, shopId, r, rows, app.clock());

    app.get(
      `/${r.path}`,
      {
        schema: {
          tags,
          summary: `List ${plural}`,
          description:
            `Cursor mode (pagination[since_id], pagination[limit]) walks every ${r.singular} by ${r.id} ascending; ` +
            `offset mode (pagination[page], pagination[per_page]) sorts by ${['id', ...Object.keys(d.sortable)].join(', ')}.`,
          querystring: ListQuery(Object.keys(d.sortable)),
          response: { 200: ListEnvelope(d.record), ...errorResponses('read', { 400: 'A bad pagination or sort parameter (named in details)' }) },
        },
      },
      async (request) => {
        const shopId = request.shop.id;
        return paginate(app.db, request, () => selectRecords(app.db, shopId, r), {
          idColumn: r.id,
          sortable: d.sortable,
          toJson: (rows) => json(app.db, shopId, rows),
          cursorRows: (sinceId, limit) => cursorRecords(app.db, shopId, r, sinceId, limit),
        });
      },
    );

    const lookup = r.lookup;
    const GetParams = lookup ? Type.Object({ [lookup.param]: Type.String({ description: lookup.description, examples: lookup.examples }) }) : IdParams;
    app.get(
      `/${r.path}/:${lookup?.param ?? r.id}`,
      {
        schema: {
          tags,
          summary: `Retrieve a ${r.singular}`,
          params: GetParams,
          response: { 200: DataEnvelope(d.record), ...errorResponses('read', { 404: `No such ${r.singular} in this shop` }) },
        },
      },
      async (request) => {
        const text = (request.params as Record<string, string>)[lookup?.param ?? r.id]!;
        const id = pathId(text);
        const row = lookup ? await lookup.find(app.db, request.shop.id, text) : id === null ? undefined : await findRecord(app.db, request.shop.id, r, id);
        if (row === undefined) throw notFound(r.singular, text);
        const [data] = await json(app.db, request.shop.id, [row]);
        return { data };
      },
    );

    if (r.write === 'upsert') {
      // One parameter name per path position (OpenAPI forbids paths differing only by it).
      const param = lookup?.param ?? 'remote_id';
      const PutParams = Type.Object({ [param]: Type.String({ description: `The ${r.singular}'s remote_id (an e-mail does not do here)`, examples: ['7012345678'] }) });
      app.put(
        `/${r.path}/:${param}`,
        {
          attachValidation: true,
          schema: {
            tags,
            summary: `Create or replace a ${r.singular}`,
            description: `Upserts the ${r.singular} synced from the commerce platform. Fields left out are cleared. Answers 201 when the ${r.singular} is new, 200 when it existed.`,
            params: PutParams,
            body: d.input,
            response: { 200: DataEnvelope(d.record), 201: DataEnvelope(d.record), ...errorResponses('write') },
          },
        },
        async (request, reply) => {
          const checked = checkedBody(r, request);
          const remoteId = pathId((request.params as Record<string, string>)[param]!);
          if (remoteId === null) {
            throw refuse(
              checked,
              new AppError('invalid_parameter', 'remote_id must be a positive integer', {
                details: [{ param: 'remote_id', code: 'invalid_format', message: 'remote_id must be a positive integer below 2^53' }],
              }),
            );
          }
          return runWrite(request, reply, async (trx) => {
            const now = app.clock();
            const shopId = request.shop.id;
            const values = valuesOf(r, checked, 'replace', now);
            const write = () => putRecord(trx, shopId, r, remoteId, values, now);
            const { created } = await checkedWrite(trx, app.config, shopId, r, checked, values, { id: remoteId, values }, write);
            const row = (await findRecord(trx, shopId, r, remoteId))!;
            const [data] = await json(trx, shopId, [row]);
            await enqueueRecordEvents(trx, shopId, r, [{ created, record: data! }], now);
            return { status: created ? 201 : 200, body: { data } };
          }).catch((e) => raced(app.db, request.shop.id, r, e));
        },
      );
    }

    if (r.write === 'create' || r.write === 'crud') {
      app.post(
        `/${r.path}`,
        {
          attachValidation: true,
          schema: {
            tags,
            summary: `Create a ${r.singular}`,
            body: d.input,
            response: { 201: DataEnvelope(d.created), ...errorResponses('write') },
          },
        },
        async (request, reply) => {
          const checked = checkedBody(r, request);
          return runWrite(request, reply, async (trx) => {
            const now = app.clock();
            const shopId = request.shop.id;
            const values = valuesOf(r, checked, 'create', now);
            const write = () => insertRecord(trx, shopId, r, { ...values, ...generateSecrets(r) }, now);
            const row = await checkedWrite(trx, app.config, shopId, r, checked, values, { id: null, values }, write);
            const [data] = await json(trx, shopId, [row]);
            await enqueueRecordEvents(trx, shopId, r, [{ created: true, record: data! }], now);
            // The one response that shows secrets.
            return { status: 201, body: { data: { ...data, ...pickSecrets(r, row) } } };
          }).catch((e) => raced(app.db, request.shop.id, r, e));
        },
      );
    }

    if (r.write === 'crud') {
      app.patch(
        `/${r.path}/:id`,
        {
          attachValidation: true,
          schema: {
            tags,
            summary: `Update a ${r.singular}`,
            description: 'Changes only the fields sent.',
            params: IdParams,
            body: d.patch,
            response: { 200: DataEnvelope(d.record), ...errorResponses('write', { 404: `No such ${r.singular} in this shop` }) },
          },
        },
        async (request, reply) => {
          const text = (request.params as { id: string }).id;
          const id = pathId(text);
          const checked = checkedBody(r, request);
          return runWrite(request, reply, async (trx) => {
            const now = app.clock();
            const shopId = request.shop.id;
            const existing = id === null ? undefined : await findRecord(trx, shopId, r, id);
            if (existing === undefined) throw refuse(checked, notFound(r.singular, text));
            const values = valuesOf(r, checked, 'patch', now);
            const write = () => updateRecord(trx, shopId, r, id!, values, now);
            const row = await checkedWrite(trx, app.config, shopId, r, checked, { ...existing, ...values }, { id, values }, write);
            const [data] = await json(trx, shopId, [row!]);
            await enqueueRecordEvents(trx, shopId, r, [{ created: false, previous: existing, record: data! }], now);
            return { status: 200, body: { data } };
          }).catch((e) => raced(app.db, request.shop.id, r, e));
        },
      );

      app.delete(
        `/${r.path}/:id`,
        {
          schema: {
            tags,
            summary: `Delete a ${r.singular}`,
            description: 'Deletes the record for good and answers 200 with its id and `deleted: true`.',
            params: IdParams,
            response: { 200: DataEnvelope(Deleted), ...errorResponses('write', { 404: `No such ${r.singular} in this shop` }) },
          },
        },
        async (request, reply) => {
          const text = (request.params as { id: string }).id;
          const id = pathId(text);
          return runWrite(request, reply, async (trx) => {
            if (id === null || !(await deleteRecord(trx, request.shop.id, r, id))) throw notFound(r.singular, text);
            return { status: 200, body: { data: { id, deleted: true } } };
          });
        },
      );
    }
  }
}

function pickSecrets(r: Resource, row: Row): Row {
  const all = recordJson(r, row, true);
  return Object.fromEntries(Object.entries(r.fields).filter(([, f]) => f.kind === 'secret').map(([name]) => [name, all[name]]));
}
