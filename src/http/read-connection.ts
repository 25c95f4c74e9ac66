import type { FastifyInstance } from 'fastify';
import type { DB } from '../db/tables.js';

// A read request makes a few queries: a page, its count, what its records show beside their
// columns (balances, tiers), the customer it is about. Each would wait in the line for a
// connection on its own, and under load the waits add up: with 500 clients, list pages that
// waited twice took over 2 s. So on PostgreSQL a GET handler takes one connection when it starts
// and makes every query on it (request.db): it waits once. SQLite has a single connection that
// everything shares in turn: there request.db is the database itself, since a handler holding
// the connection would wait forever for anything else that takes it.

declare module 'fastify' {
  interface FastifyRequest {
    /** Where a read handler reads: on PostgreSQL, one connection held while it runs. */
    db: DB;
  }
}

/**
 * Routes registered after this in the scope: each GET (and HEAD) handler, and each POST that
 * writes nothing (config.readOnly), reads through request.db.
 */
export function registerReadConnection(app: FastifyInstance): void {
  app.decorateRequest('db', null as unknown as DB);
  const hold = app.database.dialect === 'postgres';
  const wrapped = new WeakSet<object>();
  app.addHook('onRoute', (route) => {
    // The HEAD route Fastify adds for a GET one comes here too, with the handler as it was given.
    if (route.method !== 'GET' && route.method !== 'HEAD' && route.config?.readOnly !== true) return;
    const handler = route.handler;
    if (wrapped.has(handler)) return;
    route.handler = hold
      ? function (request, reply) {
          return app.db.connection().execute(async (db) => {
            request.db = db;
            return handler.call(this, request, reply);
          });
        }
      : function (request, reply) {
          request.db = app.db;
          return handler.call(this, request, reply);
        };
    wrapped.add(route.handler);
  });
}
