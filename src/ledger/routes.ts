import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { Type, type Static } from 'typebox';
import type { ErrorDetail } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses } from '../http/schemas.js';
import { toErrorDetails } from '../http/validation.js';
import { applyEvents } from './apply.js';
import { registerLedgerReadRoutes } from './read-routes.js';
import { draftEvent, invalidEvents, type EventDraft } from './rules.js';
import { BatchInput, PointsEvent, PointsEventInput } from './schemas.js';

const TAGS = ['Points events'];

/** Schema failures of the body, as error details (the route validates with attachValidation). */
function schemaErrors(request: FastifyRequest): ErrorDetail[] {
  const validation = request.validationError as { validation?: ErrorObject[] } | undefined;
  return validation?.validation ? toErrorDetails(validation.validation) : [];
}

/** The ledger's endpoints: writes (one event, or a batch) here, reads in read-routes.ts. */
export function registerLedgerRoutes(app: FastifyInstance): void {
  registerLedgerReadRoutes(app);
  const maxEvents = app.config.batchMaxEvents;

  app.post(
    '/points_events',
    {
      // Field errors and ledger errors (unknown customer, balance) are reported in one 422.
      attachValidation: true,
      schema: {
        tags: TAGS,
        summary: 'Create a points event',
        description:
          'Grants (positive amounts) or deducts (negative amounts) points and store credit for one customer. ' +
          'A deduction consumes the customer\'s unexpired lots, first-expiring first, and may not take the balance below zero.',
        body: PointsEventInput,
        response: { 201: DataEnvelope(PointsEvent), ...errorResponses('write') },
      },
    },
    async (request, reply) => {
      const errors = schemaErrors(request);
      if (errors.length > 0) throw invalidEvents(errors, null);
      const input = request.body as Static<typeof PointsEventInput>;
      return runWrite(request, reply, async (trx) => {
        const now = app.clock();
        const entry = draftEvent(input, request.shop, now, '');
        const [data] = await applyEvents(trx, request.shop.id, [entry], now, false);
        return { status: 201, body: { data } };
      });
    },
  );

  app.post(
    '/points_events/batch',
    {
      attachValidation: true,
      schema: {
        tags: TAGS,
        summary: 'Create points events in a batch',
        description:
          `Applies 1 to ${maxEvents} points events in array order (a later deduction may spend an earlier grant), all or nothing: ` +
          'when any event is invalid nothing is written and the 422 lists every failing event, with params such as `points_events[3].points_amount`. ' +
          'Answers the created events in request order.',
        body: BatchInput(maxEvents),
        response: { 201: DataEnvelope(Type.Array(PointsEvent)), ...errorResponses('write') },
      },
    },
    async (request, reply) => {
      const byElement = new Map<number, ErrorDetail[]>();
      const envelope: ErrorDetail[] = [];
      for (const detail of schemaErrors(request)) {
        const match = /^points_events\[(\d+)\]/.exec(detail.param);
        if (match === null) envelope.push(detail);
        else byElement.set(Number(match[1]), [...(byElement.get(Number(match[1])) ?? []), detail]);
      }
      if (envelope.length > 0) throw invalidEvents(envelope, null);
      const inputs = (request.body as { points_events: Static<typeof PointsEventInput>[] }).points_events;
      return runWrite(request, reply, async (trx) => {
        const now = app.clock();
        const entries: (EventDraft | ErrorDetail[])[] = inputs.map(
          (input, i) => byElement.get(i) ?? draftEvent(input, request.shop, now, `points_events[${i}].`),
        );
        const data = await applyEvents(trx, request.shop.id, entries, now, true);
        return { status: 201, body: { data } };
      });
    },
  );
}
