import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { transaction, tryTransactionLock } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { AppError, type ErrorCode } from '../errors.js';
import { auditWrite, type AuditNote } from './audit.js';

// One mechanism for every write: the handler's work, and the response it produced, commit in
// one transaction. A retry with the same Idempotency-Key replays that response byte for byte.

export interface WriteResult {
  status: number;
  body: unknown;
  /**
   * The body as the route's response schema serialises it, when the route has made that text
   * already (a batch's events: ledger/event-json.ts): sent and stored as it is.
   */
  json?: string;
}

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const MAX_KEY_LENGTH = 255;

function readKey(request: FastifyRequest): string | null {
  const raw = request.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return null;
  const key = Array.isArray(raw) ? raw[0]! : raw;
  if (key.length < 1 || key.length > MAX_KEY_LENGTH) {
    throw new AppError('invalid_parameter', `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`, {
      details: [{ param: 'Idempotency-Key', code: 'invalid_length', message: `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters` }],
    });
  }
  return key;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Narrows Idempotency-Keys inside the shop: a storefront customer's keys are their own (storefront/). */
    idempotencyScope?: string;
  }
}

/** The key as stored: a scoped one after its scope and a newline, which no header value holds. */
function storedKey(request: FastifyRequest, key: string): string {
  const scope = request.idempotencyScope;
  return scope === undefined ? key : `${scope}\n${key}`;
}

function fingerprint(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(request.rawBody ?? '')
    .digest('hex');
}

/** Keys being processed by this process; PostgreSQL adds an advisory lock across processes. */
const inFlight = new WeakMap<DB, Set<string>>();

function claim(db: DB, name: string): (() => void) | null {
  let held = inFlight.get(db);
  if (held === undefined) inFlight.set(db, (held = new Set()));
  if (held.has(name)) return null;
  held.add(name);
  const set = held;
  return () => set.delete(name);
}

const inUse = () => new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed; retry later');

interface Outcome {
  status: number;
  payload: string;
  replayed: boolean;
}

/**
 * The stored outcome of an earlier request with this key: a replay when it was the same
 * request, 422 when it was another one. Undefined when the key is new or has expired.
 */
async function storedOutcome(db: DB, request: FastifyRequest, key: string, now: number): Promise<Outcome | undefined> {
  const stored = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'status_code', 'response_body', 'created_at'])
    .where('shop_id', '=', request.shop.id)
    .where('key', '=', storedKey(request, key))
    .executeTakeFirst();
  if (stored === undefined || Number(stored.created_at) <= now - request.server.config.idempotencyTtlHours * 3_600_000) return undefined;
  if (stored.request_hash !== fingerprint(request)) {
    throw new AppError('idempotency_key_mismatch', 'This Idempotency-Key was already used with a different request; use a new key for a new request');
  }
  // Only successes are stored: an error here is a response withdrawn since (the customer it
  // showed was erased, customers/redact.ts), answered afresh with its code and message.
  if (stored.status_code >= 400) {
    const { error } = JSON.parse(stored.response_body) as { error: { code: ErrorCode; message: string } };
    throw new AppError(error.code, error.message);
  }
  return { status: stored.status_code, payload: stored.response_body, replayed: true };
}

function send(reply: FastifyReply, outcome: Outcome): FastifyReply {
  if (outcome.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(outcome.status).type('application/json; charset=utf-8').send(outcome.payload);
}

/** The methods that change something: each takes an Idempotency-Key. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A POST that writes nothing (a preview): it takes no Idempotency-Key, and has nothing to replay. */
    readOnly?: boolean;
  }
}

/** Whether a route takes an Idempotency-Key: every write, but a POST that writes nothing. */
export function takesIdempotencyKey(method: string, config: { readOnly?: boolean } | undefined): boolean {
  return WRITE_METHODS.has(method) && config?.readOnly !== true;
}

/**
 * A preValidation hook: a key that was already used is answered before the body is
 * validated, with the replay or the mismatch, whatever the new body holds.
 */
export async function replayKnownKey(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (!takesIdempotencyKey(request.method, request.routeOptions.config)) return undefined;
  const key = readKey(request);
  if (key === null) return undefined;
  const outcome = await storedOutcome(request.server.db, request, key, request.server.clock());
  // Returning the reply tells Fastify the hook answered the request.
  return outcome === undefined ? undefined : send(reply, outcome);
}

/** The work of a write request: it may tell the audit log what it cannot see (http/audit.ts). */
export type Work = (trx: DB, audit: AuditNote) => Promise<WriteResult>;

/** The work, then its audit entry, in the caller's transaction. */
async function audited(trx: DB, request: FastifyRequest, work: Work, now: number): Promise<WriteResult> {
  const note: AuditNote = {};
  const result = await work(trx, note);
  await auditWrite(trx, request, note, result.status, result.body, now);
  return result;
}

/** A write transaction of the request's shop, once its turn in the shop's line of writes comes (http/shop-writes.ts). */
function shopTransaction<T>(request: FastifyRequest, fn: (trx: DB) => Promise<T>): Promise<T> {
  const app = request.server;
  return app.shopWrites.run(request.shop.id, () => transaction(app.db, fn));
}

/**
 * Runs a write in a transaction, with its audit entry, in the shop's line of writes. With an
 * Idempotency-Key it first looks for a stored response (replayed, or 422 when the key came with
 * another request), and stores the new response in the same transaction as the write. Failed
 * requests roll back and store nothing; a replay writes nothing, its audit entry included.
 */
export async function runWrite(request: FastifyRequest, reply: FastifyReply, work: Work): Promise<FastifyReply> {
  const app = request.server;
  const key = readKey(request);
  if (key === null) {
    const result = await shopTransaction(request, (trx) => audited(trx, request, work, app.clock()));
    if (result.json !== undefined) return send(reply, { status: result.status, payload: result.json, replayed: false });
    return reply.code(result.status).send(result.body);
  }

  const shopId = request.shop.id;
  const keyAsStored = storedKey(request, key);
  const lockName = `idempotency:${shopId}:${keyAsStored}`;
  const release = claim(app.db, lockName);
  if (release === null) throw inUse();
  try {
    const now = app.clock();
    const outcome = await shopTransaction(request, async (trx): Promise<Outcome> => {
      if (!(await tryTransactionLock(trx, lockName))) throw inUse();
      // Checked again under the lock: a racing request may have stored it since the hook looked.
      const stored = await storedOutcome(trx, request, key, now);
      if (stored !== undefined) return stored;
      // An expired row under this key is replaced.
      await trx.deleteFrom('idempotency_keys').where('shop_id', '=', shopId).where('key', '=', keyAsStored).execute();
      const result = await audited(trx, request, work, now);
      reply.code(result.status);
      const payload = result.json ?? String(reply.serialize(result.body));
      await trx
        .insertInto('idempotency_keys')
        .values({ shop_id: shopId, key: keyAsStored, request_hash: fingerprint(request), status_code: result.status, response_body: payload, created_at: now })
        .execute();
      return { status: result.status, payload, replayed: false };
    });
    return send(reply, outcome);
  } finally {
    release();
  }
}

/** Deletes stored responses older than the retention period; returns how many. */
export async function pruneIdempotencyKeys(db: DB, olderThan: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<=', olderThan).executeTakeFirst();
  return Number(result.numDeletedRows);
}
