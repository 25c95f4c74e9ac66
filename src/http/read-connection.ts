import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { setWriteDatabase, writerOf } from '../db/dialect.js';
import type { Replicas } from '../db/replicas.js';
import type { DB } from '../db/tables.js';
import { unavailability } from '../db/unavailable.js';
import { replicaFor } from './read-after.js';

// A read request makes a few queries: a page, its count, what its records show beside their
// columns (balances, tiers), the customer it is about. Each would wait in the line for a
// connection on its own, and under load the waits add up: with 500 clients, list pages that
// waited twice took over 2 s. So on PostgreSQL a GET handler takes one connection when it starts
// and makes every query on it (request.db): it waits once. SQLite has a single connection that
// everything shares in turn: there request.db is the database itself, since a handler holding
// the connection would wait forever for anything else that takes it.
// With read replicas (DATABASE_REPLICA_URLS) that connection is a replica's, when one may serve
// the request (http/read-after.ts); a replica that fails it leaves the request to the primary.

declare module 'fastify' {
  interface FastifyRequest {
    /** Where a read handler reads: on PostgreSQL, one connection held while it runs. */
    db: DB;
    /** The database request.db is a connection of (a replica's, or the primary's): for what outlives the handler (an export's stream). */
    reads: DB;
  }
}

/**
 * Routes registered after this in the scope: each GET (and HEAD) handler, and each POST that
 * writes nothing (config.readOnly), reads through request.db.
 */
export function registerReadConnection(app: FastifyInstance): void {
  app.decorateRequest('db', null as unknown as DB);
  app.decorateRequest('reads', null as unknown as DB);
  const hold = app.database.dialect === 'postgres';
  const replicas = app.database.replicas;
  const wrapped = new WeakSet<object>();
  app.addHook('onRoute', (route) => {
    // The HEAD route Fastify adds for a GET one comes here too, with the handler as it was given.
    if (route.method !== 'GET' && route.method !== 'HEAD' && route.config?.readOnly !== true) return;
    const handler = route.handler;
    if (wrapped.has(handler)) return;
    route.handler =
      replicas !== null
        ? function (request, reply) {
            return onReplica(app, replicas, handler, this, request, reply);
          }
        : hold
          ? function (request, reply) {
              return app.db.connection().execute(async (db) => {
                request.db = db;
                request.reads = app.db;
                return handler.call(this, request, reply);
              });
            }
          : function (request, reply) {
              request.db = app.db;
              request.reads = app.db;
              return handler.call(this, request, reply);
            };
    wrapped.add(route.handler);
  });
}

/**
 * SQLSTATEs after which a read that a replica answered so is made again on the primary: a write
 * in a read-only transaction (a read route that writes on its way), and a query the replay
 * cancelled (a conflict with recovery).
 */
const PRIMARY_AGAIN = new Set(['25006', '40001']);

/** Runs a read handler on a connection of a replica that may serve it, else of the primary. */
async function onReplica(app: FastifyInstance, replicas: Replicas, handler: RouteHandlerMethod, that: unknown, request: FastifyRequest, reply: FastifyReply) {
  const run = (source: DB) =>
    source.connection().execute(async (db) => {
      // What such a handler writes goes to the primary's writers, as it would without replicas.
      if (source !== app.db) setWriteDatabase(db, writerOf(app.db));
      request.db = db;
      request.reads = source;
      return handler.call(that as never, request, reply);
    });
  const replica = await replicaFor(replicas, request);
  if (replica === null) return run(app.db);
  try {
    return await run(replica);
  } catch (error) {
    if (reply.sent) throw error;
    const down = unavailability(error) === 'unreachable';
    if (!down && !PRIMARY_AGAIN.has((error as { code?: string }).code ?? '')) throw error;
    if (down) replicas.failed(replica);
    return run(app.db);
  }
}
