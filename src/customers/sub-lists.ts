import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RouteScope } from '../shops/scopes.js';
import { Type, type Static, type TSchema } from 'typebox';
import { notFound } from '../errors.js';
import { ListEnvelope } from '../http/pagination.js';
import { errorResponses, notFoundError } from '../http/schemas.js';
import { findCustomer, type CustomerRow } from './repository.js';

// The routes under one customer (/customers/{customer_identifier}/…): the path parameter, its
// 404, and the lists of a customer's records (points events, redemptions, tier changes), each
// a page of its room's list.

export const CustomerParams = Type.Object({
  customer_identifier: Type.String({
    description: "The customer's remote_id, or e-mail address (case-insensitive)",
    examples: ['7012345678', 'ada@example.com'],
  }),
});

/** The customer the path's customer_identifier names; not_found when the shop has none. */
export async function pathCustomer(request: FastifyRequest & { params: Static<typeof CustomerParams> }): Promise<CustomerRow> {
  const { customer_identifier } = request.params;
  const customer = await findCustomer(request.db, request.shop.id, customer_identifier);
  if (customer === undefined) throw notFound('customer', customer_identifier);
  return customer;
}

export interface CustomerList {
  /** Under /customers/{customer_identifier}/. */
  path: string;
  tags: string[];
  summary: string;
  description?: string;
  querystring: TSchema;
  /** One item's schema. */
  item: TSchema;
  /** The page asked for of the customer's list. */
  page(request: FastifyRequest, customerRemoteId: number): Promise<{ links: unknown; data: unknown[] }>;
  /** The scope it needs (shops/scopes.ts). */
  scope: RouteScope;
}

/** GET /customers/{customer_identifier}/{path}: one page of the customer's list, or 404. */
export function registerCustomerList(server: FastifyInstance, list: CustomerList): void {
  const { path, tags, summary, description, querystring, item, page, scope } = list;
  server.withTypeProvider<TypeBoxTypeProvider>().get(
    `/customers/:customer_identifier/${path}`,
    {
      config: { scope },
      schema: {
        tags,
        summary,
        ...(description === undefined ? {} : { description }),
        params: CustomerParams,
        querystring,
        response: { 200: ListEnvelope(item), ...errorResponses('list', { 404: notFoundError('customer') }) },
      },
    },
    async (request) => page(request, Number((await pathCustomer(request)).remote_id)),
  );
}
