import { isDeepStrictEqual } from 'node:util';
import type { FastifyRequest } from 'fastify';
import type { RowWrite } from '../db/dialect.js';
import type { AuditEventsTable, DB } from '../db/tables.js';
import { auditEventRow, writeAuditEntry, type AuditEntry, type Changes } from '../shops/audit.js';
import type { TokenIdentity } from '../shops/repository.js';
import { neededScope } from './auth.js';

// The audit entry of a write request (docs/access.md), written by runWrite in the write's
// own transaction, after the work succeeded: a failed write rolls it back with everything else,
// and a replay runs no work and writes none. Routes say only what runWrite cannot tell from the
// request and the response (an AuditNote): the resource comes from the route's scope, the verb
// from the method, the record and its fields from the response's `data`.

/** What a route tells the audit log of its write; every part has a default. */
export interface AuditNote {
  /** The record as it was before the write (read in the transaction); null or left out: none. */
  before?: Record<string, unknown> | null;
  /** The record after it; defaults to the response's `data` (a DELETE: none). */
  after?: Record<string, unknown> | null;
  /** `redemption.used`; defaults to `<resource>.created|updated|deleted` by the method. */
  action?: string;
  /** `redemption`; defaults to the singular of the route's scope. */
  resource?: string;
  /** Defaults to `data.id`, else `data.remote_id`, else the path's first parameter. */
  resourceId?: string;
  /** Given outright (a batch names its events' range rather than every field). */
  changes?: Changes;
  /**
   * The entry was written already, with the work's own rows (auditRows): runWrite writes none.
   * A batch of points events writes it in its events' statement, while the customers' and the
   * shop's id locks are held, rather than one statement more after it.
   */
  written?: boolean;
}

/**
 * Fields never written to the log, at any depth: the secrets of tokens, webhooks and storefront
 * keys, and redemption codes. A change of one shows as `[redacted]` on either side.
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['secret', 'token', 'code', 'codes', 'signing_secret', 'password']);
const REDACTED = '[redacted]';

function redacted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redacted);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = SECRET_FIELDS.has(key) ? (child === null ? null : REDACTED) : redacted(child);
  return out;
}

/** `{field: [before, after]}` of the fields that differ, secrets redacted. */
export function changesOf(before: Record<string, unknown> | null, after: Record<string, unknown> | null): Changes {
  const changes: Changes = {};
  // The fields of the record as it was: what a record shows but does not store (balances) is
  // left out by the caller's `before`.
  const fields = Object.keys(before ?? after ?? {});
  for (const field of fields) {
    const was = before?.[field] ?? null;
    const is = after?.[field] ?? null;
    // A field the record shows but never stores (a balance, updated_at) moves with every write.
    if (field === 'updated_at' || isDeepStrictEqual(was, is)) continue;
    changes[field] = SECRET_FIELDS.has(field) ? [was === null ? null : REDACTED, is === null ? null : REDACTED] : [redacted(was), redacted(is)];
  }
  return changes;
}

const VERBS: Record<string, string> = { POST: 'created', PUT: 'updated', PATCH: 'updated', DELETE: 'deleted' };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `earning_rules:write` → `earning_rule`; `shop:write` → `shop`. */
const singular = (scope: string): string => scope.replace(/:.*$/, '').replace(/s$/, '');

function resourceIdOf(request: FastifyRequest, data: Record<string, unknown> | null): string | null {
  const id = data?.id ?? data?.remote_id;
  if (typeof id === 'number' || typeof id === 'string') return String(id);
  const params = Object.values((request.params ?? {}) as Record<string, string>);
  return params.length > 0 ? params[0]! : null;
}

/** The audit entry of a write request that succeeded with `status` and `body`; null: none (a shopper's write). */
function auditEntry(request: FastifyRequest, note: AuditNote, status: number, body: unknown, now: number): AuditEntry | null {
  // The storefront's shoppers (storefront/) hold no API token: their writes are their own, not the merchant's.
  if (!(request.token as TokenIdentity | null | undefined)) return null;
  const data = isRecord(body) && isRecord(body.data) ? body.data : null;
  const resource = note.resource ?? singular(neededScope(request.routeOptions.config));
  const verb = request.method === 'PUT' && status === 201 ? 'created' : VERBS[request.method]!;
  const before = note.before ?? null;
  const after = note.after !== undefined ? note.after : request.method === 'DELETE' ? null : data;
  return {
    shopId: request.shop.id,
    occurredAt: now,
    actor: { type: 'token', tokenId: request.token.id, name: request.token.name },
    action: note.action ?? `${resource}.${verb}`,
    resource,
    resourceId: note.resourceId ?? resourceIdOf(request, data),
    changes: note.changes ?? changesOf(before, after),
    requestId: request.id,
  };
}

/** Writes the audit entry of a write request that succeeded with `status` and `body`, unless the work wrote it (auditRows). */
export async function auditWrite(trx: DB, request: FastifyRequest, note: AuditNote, status: number, body: unknown, now: number): Promise<void> {
  if (note.written === true) return;
  const entry = auditEntry(request, note, status, body, now);
  if (entry !== null) await writeAuditEntry(trx, entry);
}

/**
 * The audit entry as rows to write with the work's own (writeRows), from a note that names
 * what the response's body would (its action, record and changes); the note is marked written.
 */
export function auditRows(request: FastifyRequest, note: AuditNote, status: number, now: number): RowWrite[] {
  note.written = true;
  const entry = auditEntry(request, note, status, null, now);
  return entry === null ? [] : [{ insert: 'audit_events', rows: [auditEventRow(entry) as AuditEventsTable] }];
}
