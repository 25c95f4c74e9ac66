import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';
import { errorRef } from './schemas.js';

const Status = Type.Object({ status: Type.String({ examples: ['ok'] }) }, { description: 'OK' });

const Replica = Type.Object({
  name: Type.String({ description: 'host:port of the replica', examples: ['10.0.0.12:5432'] }),
  state: Type.Union([Type.Literal('up'), Type.Literal('lagging'), Type.Literal('down')], {
    description:
      'up: serves reads; lagging: further behind than REPLICA_MAX_LAG_MS, left out until it catches up; down: does not answer, left out until it does',
  }),
  lag_ms: Type.Integer({ description: 'How far behind the primary it is; for one that is down, how long since it last answered', examples: [3] }),
});

const Ready = Type.Object(
  {
    status: Type.String({ examples: ['ok'] }),
    replicas: Type.Optional(
      Type.Array(Replica, {
        description:
          'Each read replica (DATABASE_REPLICA_URLS), when there are any. Replicas left out never make the process unready: reads then go to the primary',
      }),
    ),
  },
  { description: 'OK' },
);

/**
 * What a probe may answer besides 200: Node's parser refuses malformed HTTP before any route
 * runs, and a process shutting down refuses new requests (readiness also fails without a database).
 */
const MALFORMED = errorRef(400, {
  name: 'MalformedRequest',
  description: 'The request is not valid HTTP/1.1 (a malformed header, for instance)',
  codes: ['malformed_request'],
});
const SHUTTING_DOWN = errorRef(503, { name: 'ShuttingDown', description: 'The process is shutting down; see Retry-After' });
const NOT_READY = errorRef(503, {
  name: 'NotReady',
  description: 'The database does not answer, or the process is overloaded or shutting down; see Retry-After',
});

/** Seconds a load balancer should wait before asking a not-ready process again. */
const READY_RETRY_AFTER_SECONDS = 5;

/** Liveness (the process answers) and readiness (the database answers). */
export function registerHealth(app: FastifyInstance): void {
  // While shutting down, requests already running finish, new ones (on a connection that was
  // open before) answer 503, and every response closes its connection: a keep-alive client
  // moves on at once instead of holding the process open until the idle timeout.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback hooks: nothing here awaits, and an async hook costs every request a promise.
  app.addHook('onRequest', (_request, _reply, done) => {
    if (closing) done(new AppError('unavailable', 'The server is shutting down; retry after the time in Retry-After', { headers: { 'retry-after': '1' } }));
    else done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });

  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Liveness probe: the process answers',
        security: [],
        response: { 200: Status, 400: MALFORMED, 503: SHUTTING_DOWN },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Readiness probe: the database answers and a request would be served now',
        security: [],
        response: { 200: Ready, 400: MALFORMED, 503: NOT_READY },
      },
    },
    async () => {
      const retry = { headers: { 'retry-after': String(READY_RETRY_AFTER_SECONDS) } };
      try {
        await app.database.ping();
      } catch {
        throw new AppError('unavailable', 'The database is not reachable', retry);
      }
      // Ready means a request sent now would be served, not answered 503 by load shedding.
      const shedding = app.wouldShed();
      if (shedding !== null) throw new AppError('unavailable', `The process is overloaded (${shedding.replaceAll('_', ' ')}); requests are being shed`, retry);
      const replicas = app.database.replicas?.statuses();
      if (replicas === undefined) return { status: 'ok' };
      return { status: 'ok', replicas: replicas.map((r) => ({ name: r.name, state: r.state, lag_ms: Math.round(r.lagMs) })) };
    },
  );
}
