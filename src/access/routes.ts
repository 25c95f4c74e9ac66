import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isoTime, parseTime } from '../clock.js';
import { pathId } from '../core/ids.js';
import { AppError, notFound, validationError } from '../errors.js';
import { runWrite } from '../http/idempotency.js';
import { ListEnvelope, ListQuery, paginate } from '../http/pagination.js';
import { assertParams, queryParams, readParams } from '../http/query.js';
import { DataEnvelope, errorResponses, notFoundError, PathId } from '../http/schemas.js';
import { auditEventsQuery, type Actor, type AuditFilters, type AuditRow } from '../shops/audit.js';
import { createToken, findToken, listTokens, revokeToken, type TokenRow } from '../shops/repository.js';
import { beyond, SCOPES, type Scope } from '../shops/scopes.js';

// Who may do what, and who did what (docs/access.md): the shop's API
// tokens and its audit log. Both need `admin`.

const TOKEN_TAGS = ['API tokens'];
const AUDIT_TAGS = ['Audit log'];

const ScopeSchema = Type.Enum([...SCOPES], {
  description: '`admin`, `read` (every GET), or `<resource>:read` / `<resource>:write` (writing reads too)',
});

const ApiToken = Type.Object(
  {
    id: Type.Integer({ examples: [7] }),
    name: Type.String({ examples: ['analytics export'] }),
    hint: Type.String({ description: 'The last characters of the token, to tell tokens apart', examples: ['lty_…x9Qz'] }),
    scopes: Type.Array(ScopeSchema, { examples: [['read']] }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it stops working; null: never' }),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'ApiToken', title: 'ApiToken' },
);

const ApiTokenCreated = Type.Object(
  { ...ApiToken.properties, token: Type.String({ description: 'The secret: shown this once, never again', examples: ['lty_3q2…'] }) },
  { $id: 'ApiTokenCreated', title: 'ApiTokenCreated' },
);

const ApiTokenInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, examples: ['analytics export'] }),
    scopes: Type.Array(ScopeSchema, { minItems: 1, maxItems: SCOPES.length, description: 'At most the scopes of the token that creates it' }),
    expires_at: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it stops working (in the future); null or left out: never' }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'analytics export', scopes: ['read'] }] },
);

/** A token as the API and the CLI show it: never its secret. */
export const tokenJson = (row: TokenRow) => ({
  id: row.id,
  name: row.name,
  hint: row.hint,
  scopes: [...row.scopes],
  expires_at: isoTime(row.expires_at),
  created_at: isoTime(row.created_at),
  last_used_at: isoTime(row.last_used_at),
  revoked_at: isoTime(row.revoked_at),
});

const AuditEvent = Type.Object(
  {
    id: Type.Integer({ examples: [1024] }),
    occurred_at: Type.String({ format: 'date-time' }),
    actor: Type.Object(
      {
        type: Type.Union([Type.Literal('token'), Type.Literal('cli'), Type.Literal('system')], {
          description: 'An API token (the console holds one), the `loyalty` command, or the server itself',
        }),
        token_id: Type.Union([Type.Integer(), Type.Null()], { description: "The token's id, for `token`", examples: [7] }),
        name: Type.Union([Type.String(), Type.Null()], { description: "The token's name when it wrote", examples: ['console'] }),
      },
      { title: 'AuditActor' },
    ),
    action: Type.String({ examples: ['earning_rule.updated'] }),
    resource: Type.String({ examples: ['earning_rule'] }),
    resource_id: Type.Union([Type.String(), Type.Null()], {
      description: "The record's id (a batch of points events: the range of its events' ids, `first..last`)",
      examples: ['12'],
    }),
    changes: Type.Record(Type.String(), Type.Array(Type.Unknown(), { minItems: 2, maxItems: 2 }), {
      description: '`{field: [before, after]}` of the fields that changed; secrets show as `[redacted]`',
      examples: [{ points_amount: [100, 150] }],
    }),
    request_id: Type.Union([Type.String(), Type.Null()], { examples: ['req_2Vq8dJcKx1mQ4n7'] }),
  },
  { $id: 'AuditEvent', title: 'AuditEvent' },
);

const AUDIT_FILTERS = {
  resource: Type.Optional(Type.String({ maxLength: 64, description: 'Only entries about this kind of record, such as `earning_rule`' })),
  resource_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only entries about this record (with `resource`)' })),
  actor_token_id: Type.Optional(Type.Integer({ minimum: 1, description: 'Only entries written with this API token' })),
  'occurred_at[gte]': Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or after this time' })),
  'occurred_at[lt]': Type.Optional(Type.String({ format: 'date-time', description: 'Only entries before this time' })),
};

function auditFilters(params: URLSearchParams): AuditFilters {
  const errors: { param: string; code: string; message: string }[] = [];
  const values = readParams(params, AUDIT_FILTERS, errors);
  assertParams(errors);
  const filters: AuditFilters = {};
  if (values.resource !== undefined) filters.resource = String(values.resource);
  if (values.resource_id !== undefined) filters.resourceId = String(values.resource_id);
  if (values.actor_token_id !== undefined) filters.actorTokenId = Number(values.actor_token_id);
  const gte = values['occurred_at[gte]'];
  const lt = values['occurred_at[lt]'];
  if (gte !== undefined || lt !== undefined) filters.occurredAt = { gte: gte as number | undefined, lt: lt as number | undefined };
  return filters;
}

const auditJson = (row: AuditRow) => ({
  id: Number(row.id),
  occurred_at: isoTime(Number(row.occurred_at)),
  actor: { type: row.actor_type as Actor['type'], token_id: row.actor_token_id === null ? null : Number(row.actor_token_id), name: row.actor_name },
  action: row.action,
  resource: row.resource,
  resource_id: row.resource_id,
  changes: JSON.parse(row.changes) as Record<string, unknown[]>,
  request_id: row.request_id,
});

/** The expiry asked for: in the future, or none. */
function expiryOf(text: string | null | undefined, now: number): number | null {
  if (text === undefined || text === null) return null;
  const time = parseTime(text);
  if (time === null || time <= now) {
    throw validationError([{ param: 'expires_at', code: 'invalid_value', message: 'expires_at must be a date-time in the future' }]);
  }
  return time;
}

export function registerAccessRoutes(server: FastifyInstance): void {
  registerTokenRoutes(server);
  registerAuditRoutes(server);
}

function registerTokenRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const IdParams = Type.Object({ id: PathId("The API token's id", 7) });

  app.get(
    '/api_tokens',
    {
      config: { scope: 'admin' },
      schema: {
        tags: TOKEN_TAGS,
        summary: 'List API tokens',
        description: 'Every token of the shop, revoked and expired ones too; never their secrets.',
        response: { 200: Type.Object({ data: Type.Array(ApiToken) }), ...errorResponses('read') },
      },
    },
    async (request) => {
      // This process's uses are written first, so that the list shows them (token-usage.ts).
      await app.tokenUsage.flush();
      return { data: (await listTokens(request.db, request.shop.id)).map(tokenJson) };
    },
  );

  app.post(
    '/api_tokens',
    {
      config: { scope: 'admin' },
      schema: {
        tags: TOKEN_TAGS,
        summary: 'Create an API token',
        description: 'A token with the scopes given, at most those of the token that creates it. Its secret is in this response only.',
        body: ApiTokenInput,
        response: { 201: DataEnvelope(ApiTokenCreated), ...errorResponses('write') },
      },
    },
    async (request, reply) => {
      const now = app.clock();
      const scopes = request.body.scopes as Scope[];
      const wider = beyond(request.token.scopes, scopes);
      if (wider.length > 0) {
        throw new AppError('insufficient_scope', `A token may give no scope it lacks: this one lacks ${wider.join(', ')}`);
      }
      const expiresAt = expiryOf(request.body.expires_at, now);
      return runWrite(request, reply, async (trx, audit) => {
        const { token, row } = await createToken(trx, request.shop.id, request.body.name, now, { scopes, expiresAt });
        audit.resource = 'api_token';
        return { status: 201, body: { data: { ...tokenJson(row), token } } };
      });
    },
  );

  app.delete(
    '/api_tokens/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags: TOKEN_TAGS,
        summary: 'Revoke an API token',
        description: 'Requests with it answer 401 from now on (within 2 seconds in other server processes). Revoking twice keeps the first time.',
        params: IdParams,
        response: { 200: DataEnvelope(ApiToken), ...errorResponses('write', { 404: notFoundError('API token') }) },
      },
    },
    async (request, reply) => {
      const id = pathId(request.params.id, 'API token');
      return runWrite(request, reply, async (trx, audit) => {
        const before = await findToken(trx, request.shop.id, id);
        if (before === undefined || !(await revokeToken(trx, request.shop.id, id, app.clock()))) throw notFound('API token', request.params.id);
        const after = tokenJson((await findToken(trx, request.shop.id, id))!);
        audit.resource = 'api_token';
        audit.action = 'api_token.revoked';
        audit.before = tokenJson(before);
        audit.after = after;
        return { status: 200, body: { data: after } };
      });
    },
  );
}

function registerAuditRoutes(server: FastifyInstance): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/audit_events',
    {
      config: { scope: 'admin' },
      schema: {
        tags: AUDIT_TAGS,
        summary: 'List audit events',
        description:
          'One entry per write of the merchant API, the CLI and the console: who, what, which record, the fields that changed. ' +
          'Cursor mode walks them oldest first; offset mode sorts by id (desc: newest first). Kept AUDIT_RETENTION_DAYS (365 by default).',
        querystring: ListQuery([], AUDIT_FILTERS),
        response: { 200: ListEnvelope(AuditEvent), ...errorResponses('list') },
      },
    },
    async (request) => {
      const filters = auditFilters(queryParams(request));
      return paginate(request.db, request, () => auditEventsQuery(request.db, request.shop.id, filters), {
        idColumn: 'id',
        sortable: {},
        toJson: (rows: AuditRow[]) => rows.map(auditJson),
      });
    },
  );
}
