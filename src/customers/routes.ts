import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { runWrite } from '../http/idempotency.js';
import { DataEnvelope, errorResponses, notFoundError } from '../http/schemas.js';
import type { Row } from '../records/resource.js';
import { exportDocument } from './export.js';
import { redactCustomer } from './redact.js';
import { CustomerParams, pathCustomer } from './sub-lists.js';

// A person's rights over what the shop stores about them (docs/privacy.md): a data request
// answers all of it, a redaction erases the person and keeps the anonymised ledger.

const Redaction = Type.Object(
  {
    remote_id: Type.Integer({
      description: 'The remote_id the customer had; it now names nobody, and a later PUT with it creates a new customer',
      examples: [7012345678],
    }),
    redacted: Type.Literal(true),
    redacted_at: Type.String({ format: 'date-time', description: 'When the person was erased (a repeated DELETE answers the first time)' }),
  },
  { $id: 'CustomerRedaction', title: 'CustomerRedaction', description: 'What DELETE /customers/{customer_identifier} answers' },
);

export function registerCustomerRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/customers/:customer_identifier/export',
    {
      config: { scope: 'customers:read' },
      schema: {
        tags: ['Customers'],
        summary: 'Export everything stored about a customer',
        description:
          'A data request (Shopify\'s customers/data_request): one JSON document, streamed whatever its size, `{"data": {"exported_at", "customer", ' +
          '"points_events", "points_lots", "orders", "subscription_contracts", "referrals", "redemptions", "vip_tier_history"}}`, each item as its endpoint shows it.',
        params: CustomerParams,
        response: {
          200: {
            description: 'The export document (streamed)',
            content: { 'application/json': { schema: Type.Object({ data: Type.Object({}, { additionalProperties: true }) }) } },
          },
          ...errorResponses('read', { 404: notFoundError('customer') }),
        },
      },
    },
    async (request, reply) => {
      const customer = await pathCustomer(request);
      const stream = Readable.from(exportDocument(app.db, request.shop.id, customer as unknown as Row, app.clock()));
      return reply
        .type('application/json; charset=utf-8')
        .header('content-disposition', `attachment; filename="customer-${customer.remote_id}.json"`)
        .send(stream as never);
    },
  );

  app.delete(
    '/customers/:customer_identifier',
    {
      config: { scope: 'customers:write' },
      schema: {
        tags: ['Customers'],
        summary: 'Redact a customer',
        description:
          "Erases the person (Shopify's customers/redact) in one transaction: e-mail, names, phone, birthday, referral code, notes on their events, " +
          'and their copies in referrals, stored Idempotency-Key responses and webhook payloads. Their ledger stays under an anonymous customer, so totals ' +
          'add up. Then the remote_id and e-mail find nothing, and a PUT with the remote_id creates a new customer. Sends `customer.redacted`; a repeat ' +
          'with the remote_id answers as the first did (docs/privacy.md).',
        params: CustomerParams,
        response: {
          200: DataEnvelope(Redaction),
          ...errorResponses('write', {
            404: { ...notFoundError('customer'), description: 'No such customer in this shop, and none redacted under this remote_id' },
          }),
        },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, async (trx) => ({
        status: 200,
        body: { data: await redactCustomer(trx, request.shop.id, request.params.customer_identifier, app.clock()) },
      })),
  );
}
