import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { pathId } from '../core/ids.js';
import { findCustomer } from '../customers/repository.js';
import { isoTime } from '../clock.js';
import type { DB } from '../db/tables.js';
import { notFound, validationError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { Deleted } from '../records/routes.js';
import { signCustomerToken } from './customer-tokens.js';
import { createKey, keyJson, listKeys, newestKey, revokeKey, setKeyOrigins } from './keys.js';
import { StorefrontKey, StorefrontKeyCreated, StorefrontKeyInput, StorefrontToken, StorefrontTokenInput } from './schemas.js';

// The merchant's side of the storefront (docs/storefront.md): its keys, and customer tokens
// minted for backends that would rather ask than sign.

const TAGS = ['Storefront keys'];
const IdParams = Type.Object({ id: PathId("The storefront key's id", 3) });
const CustomerParams = Type.Object({
  customer_identifier: Type.String({
    description: "The customer's remote_id, or e-mail address (case-insensitive)",
    examples: ['7012345678', 'ada@example.com'],
  }),
});

const keyId = (text: string) => pathId(text, 'storefront key');

/** A key as it was before a write, for its audit entry (http/audit.ts); null when there is none. */
async function keyBefore(trx: DB, shopId: number, id: number): Promise<Record<string, unknown> | null> {
  const key = (await listKeys(trx, shopId)).find((k) => k.id === id);
  return key === undefined ? null : { ...key };
}

export function registerStorefrontKeyRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/storefront_keys',
    {
      config: { scope: 'storefront_keys:write' },
      schema: {
        tags: TAGS,
        summary: 'Create a storefront key',
        description:
          'A publishable key (`pk_…`, public) and its secret (`sks_…`, shown only in this response), which signs customer tokens. ' +
          'A shop may hold several keys at once, to rotate secrets.',
        body: StorefrontKeyInput,
        response: { 201: DataEnvelope(StorefrontKeyCreated), ...errorResponses('write') },
      },
    },
    async (request, reply) =>
      runWrite(request, reply, async (trx) => ({
        status: 201,
        body: { data: await createKey(trx, request.shop.id, request.body.allowed_origins, app.clock()) },
      })),
  );

  app.get(
    '/storefront_keys',
    {
      config: { scope: 'storefront_keys:read' },
      schema: {
        tags: TAGS,
        summary: 'List storefront keys',
        description: "The shop's live keys, never their secrets.",
        querystring: ListQuery([]),
        response: { 200: ListEnvelope(StorefrontKey), ...errorResponses('list') },
      },
    },
    async (request) => {
      const query = request.db
        .selectFrom('storefront_keys')
        .select(['id', 'publishable_key', 'allowed_origins', 'created_at', 'updated_at'])
        .where('shop_id', '=', request.shop.id);
      return paginate(request.db, request, query, { idColumn: 'id', sortable: {}, toJson: (rows) => rows.map(keyJson) });
    },
  );

  app.patch(
    '/storefront_keys/:id',
    {
      config: { scope: 'storefront_keys:write' },
      schema: {
        tags: TAGS,
        summary: "Change a storefront key's allowed origins",
        params: IdParams,
        body: StorefrontKeyInput,
        response: { 200: DataEnvelope(StorefrontKey), ...errorResponses('write', { 404: notFoundError('storefront key') }) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { allowed_origins } = request.body;
      return runWrite(request, reply, async (trx, audit) => {
        audit.before = await keyBefore(trx, request.shop.id, keyId(id));
        return { status: 200, body: { data: await setKeyOrigins(trx, request.shop.id, keyId(id), allowed_origins, app.clock()) } };
      });
    },
  );

  app.delete(
    '/storefront_keys/:id',
    {
      config: { scope: 'storefront_keys:write' },
      schema: {
        tags: TAGS,
        summary: 'Revoke a storefront key',
        description: 'Deletes the key: customer tokens it signed are refused from then on (within 2 seconds in other API processes).',
        params: IdParams,
        response: { 200: DataEnvelope(Deleted), ...errorResponses('write', { 404: notFoundError('storefront key') }) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      return runWrite(request, reply, async (trx, audit) => {
        audit.before = await keyBefore(trx, request.shop.id, keyId(id));
        await revokeKey(trx, request.shop.id, keyId(id));
        return { status: 200, body: { data: { id: keyId(id), deleted: true } } };
      });
    },
  );

  app.post(
    '/customers/:customer_identifier/storefront_tokens',
    {
      config: { scope: 'storefront_keys:write', optionalBody: true },
      schema: {
        tags: TAGS,
        summary: 'Mint a customer token',
        description:
          "A customer token signed with the shop's newest storefront key, for backends that would rather ask than sign one themselves " +
          '(HS256 JWT, `kid` the publishable key, `sub` the remote_id). 422 when the shop has no storefront key.',
        params: CustomerParams,
        body: StorefrontTokenInput,
        response: { 201: DataEnvelope(StorefrontToken), ...errorResponses('write', { 404: notFoundError('customer') }) },
      },
    },
    async (request, reply) => {
      const { customer_identifier } = request.params;
      const ttl = request.body.ttl_seconds ?? 3600;
      return runWrite(request, reply, async (trx, audit) => {
        const customer = await findCustomer(trx, request.shop.id, customer_identifier);
        if (customer === undefined) throw notFound('customer', customer_identifier);
        const key = await newestKey(trx, request.shop.id);
        if (key === undefined)
          throw validationError([
            { param: 'storefront_keys', code: 'no_storefront_key', message: 'The shop has no storefront key; create one with POST /storefront_keys' },
          ]);
        const { token, expiresAt } = await signCustomerToken(key, Number(customer.remote_id), app.clock(), ttl);
        audit.resource = 'customer_token';
        audit.resourceId = String(customer.remote_id);
        return { status: 201, body: { data: { token, expires_at: isoTime(expiresAt) } } };
      });
    },
  );
}
