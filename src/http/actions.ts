import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import type { DB } from '../db/tables.js';
import type { ErrorCode } from '../errors.js';
import type { RouteScope } from '../shops/scopes.js';
import { runWrite } from './idempotency.js';
import { DataEnvelope, errorResponses, notFoundError, PathId, type ErrorDoc } from './schemas.js';

// Actions on one record: `POST /{things}/{id}/{verb}` (use, void, complete, cancel). They take
// no fields (the body may be left out), run in one transaction with Idempotency-Key, and answer
// 200 with the record as it is after the action.

export const NoBody = Type.Object({}, { title: 'NoFields', additionalProperties: false, description: 'No fields; the body may be left out' });

export interface Action {
  /** `/redemptions/:id/use` */
  path: string;
  /** `redemption`, in 404 messages and the id's description. */
  singular: string;
  tags: string[];
  summary: string;
  description: string;
  /** The record as shown. */
  record: TSchema;
  /** The 409 codes of the action. */
  codes: readonly ErrorCode[];
  /** When they are answered: the 409 response's name in the document, and how its description starts. */
  conflict: { name: string; description: string };
  /** The scope it needs (shops/scopes.ts). */
  scope: RouteScope;
  /**
   * The record as shown, before the action (read in its transaction): the audit log records
   * every field the action changed (status, its time, the event it wrote). Undefined: none.
   */
  read(trx: DB, shopId: number, id: number, now: number): Promise<Record<string, unknown> | undefined>;
  run(trx: DB, shopId: number, id: number, now: number): Promise<unknown>;
}

const conflictError = ({ name, description }: Action['conflict']): ErrorDoc => ({
  name,
  description: `${description}, or a request with this Idempotency-Key is still running`,
});

/** The verbs of actions, as the audit log names what they did. */
const PAST: Record<string, string> = { use: 'used', void: 'voided', complete: 'completed', cancel: 'cancelled' };

export function registerAction(server: FastifyInstance, action: Action): void {
  const verb = action.path.slice(action.path.lastIndexOf('/') + 1);
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const IdParams = Type.Object({ id: PathId(`The ${action.singular}'s id`, 31) });
  app.post(
    action.path,
    {
      config: { scope: action.scope, optionalBody: true },
      schema: {
        tags: action.tags,
        summary: action.summary,
        description: action.description,
        params: IdParams,
        body: NoBody,
        response: {
          200: DataEnvelope(action.record),
          ...errorResponses('write', { 404: notFoundError(action.singular), 409: conflictError(action.conflict) }, action.codes),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      return runWrite(request, reply, async (trx, audit) => {
        // The path's ID is well formed (http/path-ids.ts).
        const recordId = parseRemoteId(id)!;
        const now = app.clock();
        // `redemption.used`: the action names what happened, and the record's fields before and
        // after it tell what changed.
        audit.before = (await action.read(trx, request.shop.id, recordId, now)) ?? null;
        const data = await action.run(trx, request.shop.id, recordId, now);
        audit.resource = action.singular;
        audit.action = `${action.singular}.${PAST[verb] ?? verb}`;
        return { status: 200, body: { data } };
      });
    },
  );
}
