import type { SelectQueryBuilder } from 'kysely';
import type { AuditEventsTable, DB } from '../db/tables.js';

// The audit log (docs/access.md): one entry per write of the merchant API,
// the CLI and the console, written in the write's own transaction (http/audit.ts builds the
// entries of requests; the CLI writes its own), read back by GET /audit_events, and kept
// AUDIT_RETENTION_DAYS (jobs.ts).

/** Who wrote: an API token (the console holds one too), the `loyalty` command, or the server itself. */
export type Actor = { type: 'token'; tokenId: number; name: string } | { type: 'cli' } | { type: 'system' };

/** `{field: [before, after]}` of the fields that changed. */
export type Changes = Record<string, [unknown, unknown]>;

export interface AuditEntry {
  shopId: number;
  occurredAt: number;
  actor: Actor;
  /** `earning_rule.updated` */
  action: string;
  /** `earning_rule` */
  resource: string;
  resourceId: string | null;
  changes: Changes;
  requestId: string | null;
}

export async function writeAuditEntry(db: DB, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_events').values(auditEventRow(entry)).execute();
}

/** The entry as its row (its id is the log's own sequence): written alone, or with other rows (http/audit.ts). */
export function auditEventRow(entry: AuditEntry): Omit<AuditEventsTable, 'id'> {
  const { actor } = entry;
  return {
    shop_id: entry.shopId,
    occurred_at: entry.occurredAt,
    actor_type: actor.type,
    actor_token_id: actor.type === 'token' ? actor.tokenId : null,
    actor_name: actor.type === 'token' ? actor.name : null,
    action: entry.action,
    resource: entry.resource,
    resource_id: entry.resourceId,
    changes: JSON.stringify(entry.changes),
    request_id: entry.requestId,
  };
}

/** The entry of a write made by the `loyalty` command (cli/), in that write's transaction. */
export function writeCliAuditEntry(db: DB, shopId: number, now: number, what: { action: string; resourceId: string | null; changes: Changes }): Promise<void> {
  const resource = what.action.slice(0, what.action.indexOf('.'));
  return writeAuditEntry(db, { shopId, occurredAt: now, actor: { type: 'cli' }, resource, requestId: null, ...what });
}

export interface AuditFilters {
  resource?: string;
  resourceId?: string;
  actorTokenId?: number;
  occurredAt?: { gte?: number; lt?: number };
}

export type AuditRow = AuditEventsTable & { id: number };

/** The shop's entries that pass the filters (paginated by http/pagination.ts). */
export function auditEventsQuery(db: DB, shopId: number, filters: AuditFilters): SelectQueryBuilder<any, any, AuditRow> {
  let query = db.selectFrom('audit_events').selectAll().where('shop_id', '=', shopId);
  if (filters.resource !== undefined) query = query.where('resource', '=', filters.resource);
  if (filters.resourceId !== undefined) query = query.where('resource_id', '=', filters.resourceId);
  if (filters.actorTokenId !== undefined) query = query.where('actor_token_id', '=', filters.actorTokenId);
  if (filters.occurredAt?.gte !== undefined) query = query.where('occurred_at', '>=', filters.occurredAt.gte);
  if (filters.occurredAt?.lt !== undefined) query = query.where('occurred_at', '<', filters.occurredAt.lt);
  return query as unknown as SelectQueryBuilder<any, any, AuditRow>;
}

/** Entries deleted per statement by the retention job: a short statement, whatever the backlog. */
export const AUDIT_PRUNE_BATCH = 1000;

/**
 * Deletes the entries, of every shop, that occurred before `before`, in statements of at most
 * `batch` rows, at most `maxBatches` of them per run (the next run goes on); returns how many.
 */
export async function pruneAuditLog(db: DB, before: number, batch = AUDIT_PRUNE_BATCH, maxBatches = 100): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const deleted = await pruneAuditEvents(db, before, batch);
    total += deleted;
    if (deleted < batch) break;
  }
  return total;
}

/** Deletes at most `limit` entries, of any shop, that occurred before `before`; returns how many. */
export async function pruneAuditEvents(db: DB, before: number, limit: number): Promise<number> {
  // By the whole key (shop_id, id): on PostgreSQL the key is the one index that finds an entry.
  const oldest = db
    .selectFrom('audit_events')
    .select(['shop_id', 'id'])
    .where('occurred_at', '<', before)
    .orderBy('occurred_at')
    .limit(limit)
    .$asTuple('shop_id', 'id');
  const result = await db
    .deleteFrom('audit_events')
    .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', oldest))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
