import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import type { DB } from '../db/tables.js';
import { notFound, validationError, type ErrorDetail } from '../errors.js';
import { NoBody } from '../http/actions.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { assertParams, queryParams, readParams } from '../http/query.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { connections } from '../records/resources/connections.js';
import { registerRecordRoutes } from '../records/routes.js';
import { replayDelivery } from './ingest.js';
import { connectionOf, deliveriesQuery, deliveryOf } from './repository.js';
import { ConnectionDelivery, DeliveryFilters, deliveryJson } from './schemas.js';

// The merchant's side of store connections (docs/connections.md): the connections themselves
// are a record resource (records/resources/connections.ts); their deliveries are listed here,
// and a kept one may be replayed.

const TAGS = ['Connections'];

const ConnectionParams = Type.Object({ id: PathId("The connection's id", 42) });
const DeliveryParams = Type.Object({ id: PathId("The connection's id", 42), delivery_id: PathId("The delivery's id", 981) });

async function connectionIdOf(db: DB, shopId: number, text: string) {
  const id = parseRemoteId(text);
  const connection = id === null ? undefined : await connectionOf(db, shopId, id);
  if (connection === undefined) throw notFound('connection', text);
  return connection;
}

function filtersOf(request: FastifyRequest): { status?: string; topic?: string } {
  const errors: ErrorDetail[] = [];
  const { status, topic } = readParams(queryParams(request), DeliveryFilters, errors);
  assertParams(errors);
  return { ...(status === undefined ? {} : { status: String(status) }), ...(topic === undefined ? {} : { topic: String(topic) }) };
}

export function registerConnectionRoutes(server: FastifyInstance): void {
  registerRecordRoutes(server, [connections]);
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/connections/:id/deliveries',
    {
      config: { scope: 'connections:read' },
      schema: {
        tags: TAGS,
        summary: "List a connection's deliveries",
        description:
          'Every webhook the store sent, oldest first, with what it did: `status` and `topic` narrow the list. Bodies are kept ' +
          'CONNECTION_RETENTION_DAYS (30 by default); the record of each delivery stays.',
        params: ConnectionParams,
        querystring: ListQuery([], DeliveryFilters),
        response: { 200: ListEnvelope(ConnectionDelivery), ...errorResponses('list', { 404: notFoundError('connection') }) },
      },
    },
    async (request) => {
      const shopId = request.shop.id;
      const connection = await connectionIdOf(request.db, shopId, request.params.id);
      return paginate(request.db, request, deliveriesQuery(request.db, shopId, Number(connection.id), filtersOf(request)), {
        idColumn: 'id',
        sortable: {},
        toJson: async (rows) => rows.map((row) => deliveryJson(row as never)),
      });
    },
  );

  app.post(
    '/connections/:id/deliveries/:delivery_id/replay',
    {
      config: { scope: 'connections:write', optionalBody: true },
      schema: {
        tags: TAGS,
        summary: 'Replay a delivery',
        description:
          "Applies the delivery's kept body again, by the same rules as when it arrived (a newer payload applied since makes it stale), " +
          'and answers the delivery as it now stands. Used after fixing what made it fail. 422 when its body is no longer kept.',
        params: DeliveryParams,
        body: NoBody,
        response: { 200: DataEnvelope(ConnectionDelivery), ...errorResponses('write', { 404: notFoundError('connection or delivery') }) },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, async (trx, audit) => {
        const shopId = request.shop.id;
        const connection = await connectionIdOf(trx, shopId, request.params.id);
        const deliveryId = parseRemoteId(request.params.delivery_id);
        const before = deliveryId === null ? undefined : await deliveryOf(trx, shopId, Number(connection.id), deliveryId);
        if (before === undefined) throw notFound('delivery', request.params.delivery_id);
        if (before.body === null)
          throw validationError([
            { param: 'delivery_id', code: 'body_not_kept', message: 'The body of this delivery is no longer kept; it cannot be replayed' },
          ]);
        await replayDelivery(trx, { shopId, now: app.clock(), config: app.config }, connection, {
          id: Number(before.id),
          topic: before.topic,
          body: before.body,
        });
        const after = (await deliveryOf(trx, shopId, Number(connection.id), Number(before.id)))!;
        audit.resource = 'connection_delivery';
        audit.action = 'connection_delivery.replayed';
        audit.before = deliveryJson(before);
        return { status: 200, body: { data: deliveryJson(after) } };
      }),
  );
}
