import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import { shopRowCount } from '../db/counts.js';
import type { DB } from '../db/tables.js';
import { notFound, type ErrorDetail } from '../errors.js';
import type { AuditNote } from '../http/audit.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { assertParams, queryParams, readParams } from '../http/query.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { attachedErrors } from '../http/validation.js';
import { cursorRecords, findRecord, selectRecords } from './repository.js';
import { derive, recordJson, recordsJson, type Resource, type Row } from './resource.js';
import { RESOURCES } from './resources/index.js';
import { checkedBody, createRecord, patchRecord, raced, removeRecord, replaceRecord, type Writer } from './write.js';

// The routes of every record resource, generated from its description. Each route below is
// registered explicitly per resource: grep for `/${r.path}`.

/** `id, name or created_at`. */
const orList = (words: string[]) => (words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`);

/** `an order`, `a VIP tier`, `a subscription billing attempt`. */
const aOrAn = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;

export const Deleted = Type.Object(
  { id: Type.Integer({ examples: [42] }), deleted: Type.Literal(true) },
  { $id: 'DeletedRecord', title: 'DeletedRecord', description: 'What DELETE answers: the record is gone for good' },
);

/** A path ID: a positive integer below 2^53, else null. */
const pathId = (text: string) => parseRemoteId(text);

/** The resource's name in the audit log: `earning_rule`, `subscription_billing_attempt`. */
const auditName = (r: Resource) => r.table.replace(/s$/, '');

/** Tells the audit log (http/audit.ts) the record, as stored before the write; none when `id` names none. */
async function noteBefore(trx: DB, audit: AuditNote, shopId: number, r: Resource, id: number | null): Promise<void> {
  audit.resource = auditName(r);
  const row = id === null ? undefined : await findRecord(trx, shopId, r, id);
  audit.before = row === undefined ? null : recordJson(r, row);
}

/** Who writes: the request's shop, now, under this deployment's settings. */
const writer = (app: FastifyInstance, request: FastifyRequest): Writer => ({ shopId: request.shop.id, now: app.clock(), config: app.config });

export function registerRecordRoutes(server: FastifyInstance, resources: readonly Resource[] = RESOURCES): void {
  // Request types follow from each route's schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  for (const r of resources) {
    const d = derive(r);
    const plural = r.plural;
    const tags = [r.tag];
    const IdParams = Type.Object({ [r.id]: PathId(`The ${r.singular}'s ${r.id}`, 42) });
    const json = (db: DB, shopId: number, rows: Row[]) => recordsJson(db, shopId, r, rows, app.clock(), app.config);
    const filterSchemas = Object.fromEntries(Object.entries(r.filters ?? {}).map(([name, f]) => [name, Type.Optional(f.schema)]));

    const read = { scope: `${r.scope}:read` } as const;
    const write = { scope: `${r.scope}:write` } as const;
    app.get(
      `/${r.path}`,
      {
        config: read,
        schema: {
          tags,
          summary: `List ${plural}`,
          description:
            `Cursor mode walks every ${r.singular} in ascending ${r.id} order (since_id is ${aOrAn(r.singular)}'s ${r.id}); ` +
            `offset mode sorts by ${orList(['id', ...Object.keys(d.sortable)])}.`,
          querystring: ListQuery(Object.keys(d.sortable), filterSchemas),
          response: { 200: ListEnvelope(d.record), ...errorResponses('list') },
        },
      },
      async (request) => {
        const shopId = request.shop.id;
        const errors: ErrorDetail[] = [];
        const wanted = Object.entries(readParams(queryParams(request), filterSchemas, errors)).filter(([, value]) => value !== undefined);
        assertParams(errors);
        if (wanted.length > 0) {
          const filtered = () => wanted.reduce((query, [name, value]) => r.filters![name]!.apply(query, value!), selectRecords(request.db, shopId, r));
          return paginate(request.db, request, filtered, { idColumn: r.id, sortable: d.sortable, toJson: (rows) => json(request.db, shopId, rows) });
        }
        return paginate(request.db, request, () => selectRecords(request.db, shopId, r), {
          idColumn: r.id,
          sortable: d.sortable,
          toJson: (rows) => json(request.db, shopId, rows),
          cursorRows: (sinceId, limit) => cursorRecords(request.db, shopId, r, sinceId, limit),
          total: () => shopRowCount(request.db, shopId, r.table),
        });
      },
    );

    const lookup = r.lookup;
    const GetParams = lookup ? Type.Object({ [lookup.param]: Type.String({ description: lookup.description, examples: lookup.examples }) }) : IdParams;
    app.get(
      `/${r.path}/:${lookup?.param ?? r.id}`,
      {
        config: read,
        schema: {
          tags,
          summary: `Retrieve ${aOrAn(r.singular)}`,
          params: GetParams,
          response: { 200: DataEnvelope(d.record), ...errorResponses('read', { 404: notFoundError(r.singular) }) },
        },
      },
      async (request) => {
        const text = request.params[lookup?.param ?? r.id]!;
        const id = pathId(text);
        const row = lookup
          ? await lookup.find(request.db, request.shop.id, text)
          : id === null
            ? undefined
            : await findRecord(request.db, request.shop.id, r, id);
        if (row === undefined) throw notFound(r.singular, text);
        const [data] = await json(request.db, request.shop.id, [row]);
        return { data };
      },
    );

    if (r.write === 'upsert') {
      // One parameter name per path position (OpenAPI forbids paths differing only by it). Where
      // GET also takes an e-mail, PUT does not: it creates under the remote_id.
      const param = lookup?.param ?? r.id;
      const PutParams = lookup ? Type.Object({ [param]: PathId(`The ${r.singular}'s remote_id (not an e-mail address)`, 7012345678) }) : IdParams;
      app.put(
        `/${r.path}/:${param}`,
        {
          config: write,
          attachValidation: true,
          schema: {
            tags,
            summary: `Create or replace ${aOrAn(r.singular)}`,
            description: `Upserts the ${r.singular} synced from the commerce platform. Fields left out are cleared. Answers 201 when the ${r.singular} is new, 200 when it existed.`,
            params: PutParams,
            body: d.input,
            response: { 200: DataEnvelope(d.record), 201: DataEnvelope(d.record), ...errorResponses('write') },
          },
        },
        async (request, reply) => {
          const checked = checkedBody(r, request.body, attachedErrors(request), true);
          // The path's ID is well formed (http/path-ids.ts).
          const remoteId = pathId(request.params[param]!)!;
          return runWrite(request, reply, async (trx, audit) => {
            await noteBefore(trx, audit, request.shop.id, r, remoteId);
            const { created, record } = await replaceRecord(trx, writer(app, request), r, remoteId, checked);
            return { status: created ? 201 : 200, body: { data: record } };
          }).catch((e) => raced(app.db, request.shop.id, r, e));
        },
      );
    }

    if (r.write === 'create' || r.write === 'crud') {
      app.post(
        `/${r.path}`,
        {
          config: write,
          attachValidation: true,
          schema: {
            tags,
            summary: `Create ${aOrAn(r.singular)}`,
            body: d.input,
            response: { 201: DataEnvelope(d.created), ...errorResponses('write') },
          },
        },
        async (request, reply) => {
          const checked = checkedBody(r, request.body, attachedErrors(request), true);
          return runWrite(request, reply, async (trx, audit) => {
            audit.resource = auditName(r);
            // The one response that shows secrets.
            const data = await createRecord(trx, writer(app, request), r, checked);
            return { status: 201, body: { data } };
          }).catch((e) => raced(app.db, request.shop.id, r, e));
        },
      );
    }

    if (r.write === 'crud') {
      app.patch(
        `/${r.path}/:id`,
        {
          config: write,
          attachValidation: true,
          schema: {
            tags,
            summary: `Update ${aOrAn(r.singular)}`,
            description: 'Changes only the fields sent.',
            params: IdParams,
            body: d.patch,
            response: { 200: DataEnvelope(d.record), ...errorResponses('write', { 404: notFoundError(r.singular) }) },
          },
        },
        async (request, reply) => {
          const text = request.params.id!;
          const id = pathId(text);
          const checked = checkedBody(r, request.body, attachedErrors(request), false);
          return runWrite(request, reply, async (trx, audit) => {
            await noteBefore(trx, audit, request.shop.id, r, id);
            const data = await patchRecord(trx, writer(app, request), r, id, text, checked);
            return { status: 200, body: { data } };
          }).catch((e) => raced(app.db, request.shop.id, r, e));
        },
      );

      app.delete(
        `/${r.path}/:id`,
        {
          config: write,
          schema: {
            tags,
            summary: `Delete ${aOrAn(r.singular)}`,
            description: `Deletes the ${r.singular} for good and answers 200 with its id and \`deleted: true\`.`,
            params: IdParams,
            response: { 200: DataEnvelope(Deleted), ...errorResponses('write', { 404: notFoundError(r.singular) }) },
          },
        },
        async (request, reply) => {
          const text = request.params.id!;
          const id = pathId(text);
          return runWrite(request, reply, async (trx, audit) => {
            await noteBefore(trx, audit, request.shop.id, r, id);
            return { status: 200, body: { data: await removeRecord(trx, request.shop.id, r, id, text) } };
          });
        },
      );
    }
  }
}
