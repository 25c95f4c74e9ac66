import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import { CUSTOMER_FILTER, filteredCustomer } from '../customers/filter.js';
import { registerCustomerList } from '../customers/sub-lists.js';
import { shopRowCount } from '../db/counts.js';
import { notFound } from '../errors.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { queryParams } from '../http/query.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { eventJson } from './event-json.js';
import { eventsQuery, findEvent, orderExists, type EventRow } from './events-repository.js';
import { EVENT_FILTERS, parseEventFilters } from './filters.js';
import { Lot, LotsQuery, lotsPage } from './lots-list.js';
import { PointsEvent } from './schemas.js';

const TAGS = ['Points events'];

/** Offset-mode sort fields (each has an index on (shop_id, column, id)). */
const SORTABLE = { applied_at: 'points_events.applied_at' } as const;

const IdParams = Type.Object({ id: PathId("The points event's id", 4812) });

const listSpec = {
  idColumn: 'points_events.id',
  sortable: SORTABLE,
  toJson: (rows: EventRow[]) => rows.map((row) => eventJson(row, row.email, row.reversed_by_event_id)),
};

/** The read endpoints of the ledger: the shop's events, one event, one customer's events. */
export function registerLedgerReadRoutes(server: FastifyInstance): void {
  // Request types follow from each route's schemas.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/points_events',
    {
      config: { scope: 'points_events:read' },
      schema: {
        tags: TAGS,
        summary: 'List points events',
        description: "The shop's ledger, with cursor or offset pagination, filtered by source and applied_at.",
        querystring: ListQuery(Object.keys(SORTABLE), { ...EVENT_FILTERS, ...CUSTOMER_FILTER }),
        response: { 200: ListEnvelope(PointsEvent), ...errorResponses('list') },
      },
    },
    async (request) => {
      const params = queryParams(request);
      const filters = parseEventFilters(params);
      const customer = await filteredCustomer(request.db, request.shop.id, params);
      if (customer !== undefined) filters.customerRemoteId = customer;
      const unfiltered = Object.keys(filters).length === 0;
      const spec = unfiltered ? { ...listSpec, total: () => shopRowCount(request.db, request.shop.id, 'points_events') } : listSpec;
      return paginate(request.db, request, eventsQuery(request.db, request.shop.id, filters), spec);
    },
  );

  app.get(
    '/points_events/:id',
    {
      config: { scope: 'points_events:read' },
      schema: {
        tags: TAGS,
        summary: 'Retrieve a points event',
        params: IdParams,
        response: { 200: DataEnvelope(PointsEvent), ...errorResponses('read', { 404: notFoundError('points event') }) },
      },
    },
    async (request) => {
      const { id } = request.params;
      const eventId = parseRemoteId(id);
      const row = eventId === null ? undefined : await findEvent(request.db, request.shop.id, eventId);
      if (row === undefined) throw notFound('points event', id);
      return { data: eventJson(row, row.email, row.reversed_by_event_id) };
    },
  );

  registerCustomerList(app, {
    path: 'points_events',
    scope: 'points_events:read',
    tags: TAGS,
    summary: "List a customer's points events",
    description: "One customer's ledger, with the same pagination and filters as the shop's.",
    querystring: ListQuery(Object.keys(SORTABLE), EVENT_FILTERS),
    item: PointsEvent,
    async page(request, customerRemoteId) {
      const filters = parseEventFilters(queryParams(request));
      return paginate(request.db, request, eventsQuery(request.db, request.shop.id, { ...filters, customerRemoteId }), listSpec);
    },
  });

  registerLotsList(app);

  const OrderParams = Type.Object({ remote_id: PathId("The order's remote_id", 5531) });
  app.get(
    '/orders/:remote_id/points_events',
    {
      config: { scope: 'points_events:read' },
      schema: {
        tags: TAGS,
        summary: "List an order's points events",
        description: "What the order earned (source order) and what its refunds took back (source refund), with the same pagination and filters as the shop's.",
        params: OrderParams,
        querystring: ListQuery(Object.keys(SORTABLE), EVENT_FILTERS),
        response: { 200: ListEnvelope(PointsEvent), ...errorResponses('list', { 404: notFoundError('order') }) },
      },
    },
    async (request) => {
      const { remote_id } = request.params;
      const orderId = parseRemoteId(remote_id);
      if (orderId === null || !(await orderExists(request.db, request.shop.id, orderId))) throw notFound('order', remote_id);
      const filters = parseEventFilters(queryParams(request));
      return paginate(request.db, request, eventsQuery(request.db, request.shop.id, { ...filters, orderRemoteId: orderId! }), listSpec);
    },
  );
}

/** GET /customers/{customer_identifier}/lots, among the customer's other lists. */
function registerLotsList(app: FastifyInstance): void {
  registerCustomerList(app, {
    path: 'lots',
    scope: 'points_events:read',
    tags: TAGS,
    summary: "List a customer's open lots",
    description: 'Why the balance is what it is: each open lot, its granting event and what remains. Sort expires_at: the order deductions use them.',
    querystring: LotsQuery,
    item: Lot,
    page: (request, customerRemoteId) => lotsPage(request, customerRemoteId, app.clock()),
  });
}
