import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { DB } from '../db/tables.js';
import { AppError } from '../errors.js';
import { auditRows } from '../http/audit.js';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { isJsonObject, type FieldError } from '../core/validation.js';
import { attachedErrors } from '../http/validation.js';
import { getShop, type Shop } from '../shops/repository.js';
import { postingEffects } from '../earning/effects.js';
import { applyEvents } from './apply.js';
import { eventsText } from './event-json.js';
import { reverseEvent } from './reverse.js';
import { registerLedgerReadRoutes } from './read-routes.js';
import { checkEvent, invalidEvents } from './rules.js';
import { BatchInput, PointsEvent, PointsEventInput, ReverseInput } from './schemas.js';
import { parseRemoteId } from '../core/ids.js';
import { pushTo } from '../core/maps.js';

const TAGS = ['Points events'];
const NO_ERRORS: readonly FieldError[] = [];
/** The batch body's list of events: its elements' errors are shown as `points_events[3].field`. */
const LIST = 'points_events';

/**
 * The shop's expiry settings as they are now: the request's shop comes from the token cache
 * and may be a moment old, but expiry rules must follow the latest PATCH /shop.
 */
async function currentShop(trx: DB, shopId: number): Promise<Shop> {
  const shop = await getShop(trx, shopId);
  if (shop === undefined) throw new AppError('unauthorized', 'The API token is unknown or has been revoked');
  return shop;
}

/** The ledger's endpoints: writes (one event, or a batch) here, reads in read-routes.ts. */
export function registerLedgerRoutes(server: FastifyInstance): void {
  // Request types follow from each route's schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  registerLedgerReadRoutes(server);
  const maxEvents = app.config.batchMaxEvents;

  app.post(
    '/points_events',
    {
      config: { scope: 'points_events:write' },
      // Schema errors, the rules of the fields that passed it and ledger errors (unknown
      // customer, balance) are reported in one 422.
      attachValidation: true,
      schema: {
        tags: TAGS,
        summary: 'Create a points event',
        description:
          'Grants (positive amounts) or deducts (negative amounts) points and store credit for one customer. ' +
          "A deduction consumes the customer's unexpired lots, first-expiring first, and may not take the balance below zero.",
        body: PointsEventInput,
        response: { 201: DataEnvelope(PointsEvent), ...errorResponses('write') },
      },
    },
    async (request, reply) => {
      const errors = attachedErrors(request);
      if (!isJsonObject(request.body)) throw invalidEvents(errors);
      const input = request.body;
      return runWrite(request, reply, async (trx) => {
        const now = app.clock();
        const entry = checkEvent(input, errors, await currentShop(trx, request.shop.id), now);
        const effects = await postingEffects(trx, request.shop.id, (entry.draft?.points ?? 0) !== 0);
        const applied = await applyEvents(trx, request.shop.id, [entry], now);
        // A single event's errors are shown without its index: its fields are the body's.
        if (applied.failures) throw invalidEvents(applied.failures.map(({ index: _, ...error }) => error));
        await effects.follow(applied.posted, now);
        return { status: 201, body: { data: applied.events[0] } };
      });
    },
  );

  app.post(
    '/points_events/batch',
    {
      config: { scope: 'points_events:write' },
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
      const byElement = new Map<number, FieldError[]>();
      const envelope: FieldError[] = [];
      for (const error of attachedErrors(request, LIST)) {
        if (error.index === undefined) envelope.push(error);
        else pushTo(byElement, error.index, { ...error, index: undefined });
      }
      const inputs = isJsonObject(request.body) ? request.body.points_events : undefined;
      // The elements of a list that is missing, not a list, empty or too long are not looked
      // into; an unknown field beside a good list does not hide the elements' errors.
      if (!Array.isArray(inputs) || envelope.some((e) => e.field === LIST && e.below === undefined)) throw invalidEvents(envelope, LIST);
      return runWrite(request, reply, async (trx, audit) => {
        const now = app.clock();
        const shop = await currentShop(trx, request.shop.id);
        const entries = inputs.map((input, i) => checkEvent(input, byElement.get(i) ?? NO_ERRORS, shop, now));
        const judgeOnly = envelope.length > 0;
        const effects = await postingEffects(trx, request.shop.id, !judgeOnly && entries.some((e) => (e.draft?.points ?? 0) !== 0));
        // One audit entry for the batch, naming its events' range (the ledger is the record of
        // each), written in the events' statement: no statement more while their locks are held.
        const alongside = {
          rows(_: undefined, ids: readonly number[]) {
            audit.action = 'points_event.batch_created';
            audit.resourceId = `${Math.min(...ids)}..${Math.max(...ids)}`;
            audit.changes = { points_events: [null, ids.length] };
            return auditRows(request, audit, 201, now);
          },
        };
        const applied = await applyEvents(trx, request.shop.id, entries, now, { judgeOnly, alongside });
        if (applied.failures || judgeOnly) throw invalidEvents([...envelope, ...(applied.failures ?? [])], LIST);
        await effects.follow(applied.posted, now);
        const events = applied.events;
        return { status: 201, body: { data: events }, json: eventsText(events) };
      });
    },
  );

  const ReverseParams = Type.Object({ id: PathId('The id of the points event to reverse', 4812) });
  app.post(
    '/points_events/:id/reverse',
    {
      // The body is optional: none reads as {} (http/json-body.ts).
      config: { scope: 'points_events:write', optionalBody: true },
      schema: {
        tags: TAGS,
        summary: 'Reverse a points event',
        description:
          'Writes one `reversal` event that undoes the event exactly: what a deduction took goes back into the very lots it came from, with their ' +
          'original expiry (what lands in a lot that has expired since is written off by the expiry sweep); what a grant gave is taken back from its ' +
          'own lot first, then first-expiring first from the others, never below zero (422 `insufficient_balance`). Expirations and reversals cannot ' +
          "be reversed (422 `not_reversible`), nor can a redemption's event (void the redemption) or an order's (send its refund); an event is reversed at most once (409 `already_reversed`). The original then shows " +
          '`reversed_by_event_id`. The body is optional.',
        params: ReverseParams,
        body: ReverseInput,
        response: {
          201: DataEnvelope(PointsEvent),
          ...errorResponses(
            'write',
            {
              404: notFoundError('points event'),
              409: { name: 'AlreadyReversed', description: 'Already reversed, or a request with this Idempotency-Key is still running' },
              422: { name: 'ReversalRefused', description: 'Not reversible, not covered by the balance, or invalid fields' },
            },
            ['insufficient_balance', 'not_reversible', 'already_reversed'],
          ),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      // The path's ID is well formed (http/path-ids.ts).
      const eventId = parseRemoteId(id)!;
      const body = request.body as { internal_note?: string | null; external_note?: string | null };
      return runWrite(request, reply, async (trx, audit) => {
        const now = app.clock();
        audit.action = 'points_event.reversed';
        audit.resourceId = String(eventId);
        // A reversed grant's points are no longer earned: the tier follows.
        const effects = await postingEffects(trx, request.shop.id, true);
        const { event, posted } = await reverseEvent(trx, request.shop.id, eventId, now, {
          internalNote: body.internal_note,
          externalNote: body.external_note,
        });
        await effects.follow(posted, now);
        return { status: 201, body: { data: event } };
      });
    },
  );
}
