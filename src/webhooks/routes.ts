import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import type { DB, DeliveryStatus } from '../db/tables.js';
import { notFound, type ErrorDetail } from '../errors.js';
import { assertParams, queryParams, readParams } from '../http/query.js';
import { NoBody } from '../http/actions.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { findRecord } from '../records/repository.js';
import { webhooks } from '../records/resources/webhooks.js';
import { attemptsOf, deliveriesQuery, requeueDelivery, type DeliveryRow } from './repository.js';
import { DeliveryFilter, deliveryJson, WebhookDelivery } from './schemas.js';

// What a merchant sees of deliveries: a webhook's deliveries with their attempts, and a
// resend. The webhooks themselves are a record resource (records/resources/webhooks.ts).

const TAGS = ['Webhooks'];

const WebhookParams = Type.Object({ id: PathId("The webhook's id", 42) });
const DeliveryParams = Type.Object({
  id: PathId("The webhook's id", 42),
  delivery_id: PathId("The delivery's id", 981),
});

/** The webhook's id when it names one of the shop's webhooks; else a 404. */
async function webhookOf(db: DB, shopId: number, text: string): Promise<number> {
  const id = parseRemoteId(text);
  if (id === null || (await findRecord(db, shopId, webhooks, id)) === undefined) throw notFound('webhook', text);
  return id;
}

async function deliveriesJson(db: DB, shopId: number, rows: DeliveryRow[]) {
  const attempts = await attemptsOf(
    db,
    shopId,
    rows.map((row) => Number(row.id)),
  );
  return rows.map((row) => deliveryJson(row, attempts.get(Number(row.id)) ?? []));
}

/** The deliveries list's `status` filter (undefined: every delivery); a bad value is a 400 naming it. */
function deliveryStatusOf(request: FastifyRequest): DeliveryStatus | undefined {
  const errors: ErrorDetail[] = [];
  const { status } = readParams(queryParams(request), DeliveryFilter, errors);
  assertParams(errors);
  return status as DeliveryStatus | undefined;
}

export function registerWebhookRoutes(server: FastifyInstance): void {
  // Request types follow from each route's schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/webhooks/:id/deliveries',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags: TAGS,
        summary: "List a webhook's deliveries",
        description:
          "Every event queued for this webhook, newest last, with each attempt's status code and error; `status` narrows to pending, delivered or failed ones. " +
          'Delivered and failed deliveries are kept 30 days by default.',
        params: WebhookParams,
        querystring: ListQuery([], DeliveryFilter),
        response: { 200: ListEnvelope(WebhookDelivery), ...errorResponses('list', { 404: notFoundError('webhook') }) },
      },
    },
    async (request) => {
      const shopId = request.shop.id;
      const webhookId = await webhookOf(request.db, shopId, request.params.id);
      return paginate(request.db, request, deliveriesQuery(request.db, shopId, webhookId, deliveryStatusOf(request)), {
        idColumn: 'id',
        sortable: {},
        toJson: (rows) => deliveriesJson(request.db, shopId, rows),
      });
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/retry',
    {
      config: { scope: 'webhooks:write', optionalBody: true },
      schema: {
        tags: TAGS,
        summary: 'Retry a delivery',
        description:
          'Queues the delivery to be sent again now, whatever its status (a failed one gets one more attempt; a delivered one is sent again). Answers 202.',
        params: DeliveryParams,
        body: NoBody,
        response: { 202: DataEnvelope(WebhookDelivery), ...errorResponses('write', { 404: notFoundError('webhook or delivery') }) },
      },
    },
    async (request, reply) => {
      const params = request.params;
      const deliveryId = parseRemoteId(params.delivery_id);
      return runWrite(request, reply, async (trx, audit) => {
        const shopId = request.shop.id;
        const webhookId = await webhookOf(trx, shopId, params.id);
        // The delivery as it was: the audit log records each field the retry changed.
        const before = deliveryId === null ? undefined : await deliveriesQuery(trx, shopId, webhookId).where('id', '=', deliveryId).executeTakeFirst();
        const row = before === undefined ? undefined : await requeueDelivery(trx, shopId, webhookId, deliveryId!, app.clock());
        if (row === undefined) throw notFound('delivery', params.delivery_id);
        const [was, data] = await deliveriesJson(trx, shopId, [before!, row]);
        audit.resource = 'webhook_delivery';
        audit.action = 'webhook_delivery.retried';
        audit.before = was as unknown as Record<string, unknown>;
        return { status: 202, body: { data } };
      });
    },
  );
}
