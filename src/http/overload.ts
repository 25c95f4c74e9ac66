import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Config } from '../config.js';
import { DatabaseBusyError } from '../db/connection-queue.js';
import { errorStatus } from '../errors.js';
import { errorBody, overloaded } from './error-handler.js';

// Load shedding: a request the process cannot finish within a second or so is answered 503 with
// Retry-After at once, before its body is read and before Fastify sees it, rather than left
// waiting. What is bounded:
// - requests being handled, and the body bytes they declared (memory and CPU);
// - the event loop's lag, read as it is now, not only at the last sample (CPU);
// - the lines for a database connection: new requests are turned away once its oldest waiter
//   has waited half of MAX_QUEUE_WAIT_MS (writes also once the oldest waiter for a write
//   connection has waited three quarters of it), and a waiter that reaches it gives up
//   (db/connection-queue.ts).
// Shed requests are counted in /metrics and logged at most once a second, never one by one.

export type ShedReason = 'requests_in_flight' | 'body_bytes_in_flight' | 'event_loop_delay' | 'database_queue';

/** Answered whatever the load: a prober or a scraper must see the process as it is. */
const NEVER_SHED = new Set(['/healthz', '/metrics']);

const SAMPLE_MS = 50;

/**
 * The event loop's lag: how late a timer fires. Read between samples, a timer that is overdue
 * counts too, so a loop blocked right now is seen now. Measured from when the app is ready, so
 * the work of starting up is never taken for overload.
 */
class LoopLag {
  #expected = 0;
  #lag = 0;
  #timer: NodeJS.Timeout | undefined;

  start(): void {
    this.reset();
    this.#timer = setInterval(() => {
      const now = performance.now();
      this.#lag = Math.max(0, now - this.#expected);
      this.#expected = now + SAMPLE_MS;
    }, SAMPLE_MS);
    this.#timer.unref();
  }

  /** Forgets what was measured so far (the work between ready and listening). */
  reset(): void {
    this.#lag = 0;
    this.#expected = performance.now() + SAMPLE_MS;
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  ms(): number {
    return this.#timer === undefined ? 0 : Math.max(this.#lag, performance.now() - this.#expected);
  }
}

/** Counts shed requests, and says so in the log at most once a second. */
class ShedLog {
  readonly #counter: Counter<'reason'>;
  readonly #since = new Map<ShedReason, number>();
  #loggedAt = -Infinity;

  constructor(
    private readonly app: FastifyInstance,
    registry: Registry,
  ) {
    this.#counter = new Counter({
      name: 'http_requests_shed_total',
      help: 'Requests answered 503 because the process was overloaded, by reason',
      labelNames: ['reason'],
      registers: [registry],
    });
  }

  record(reason: ShedReason): void {
    this.#counter.inc({ reason });
    this.#since.set(reason, (this.#since.get(reason) ?? 0) + 1);
    const now = performance.now();
    if (now - this.#loggedAt < 1000) return;
    this.#loggedAt = now;
    this.app.log.warn({ shed: Object.fromEntries(this.#since) }, 'overloaded: requests answered 503 since the last report, by reason');
    this.#since.clear();
  }
}

/** The body bytes a request declares; a chunked body may be as large as the limit. */
function declaredBytes(request: IncomingMessage, bodyLimit: number): number {
  const length = request.headers['content-length'];
  if (length !== undefined) return Math.min(Number(length) || 0, bodyLimit);
  return request.headers['transfer-encoding'] === undefined ? 0 : bodyLimit;
}

/** The path of a raw request's URL, without its query and trailing slash (as the router ignores it). */
function pathOf(url: string | undefined): string {
  const end = url === undefined ? 0 : url.indexOf('?');
  const path = url === undefined ? '' : end < 0 ? url : url.slice(0, end);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * Load shedding runs on Node's own request event, before Fastify: a request turned away costs a
 * check of a few counters and one written answer, no routing, hooks or reply objects. Under a
 * flood of clients that retry at once, that cost is most of what the process spends, and every
 * millisecond of it delays the requests it did admit. `newRequestId` names the answer as
 * Fastify would have.
 */
export function registerLoadShedding(app: FastifyInstance, config: Config, registry: Registry, newRequestId: () => string): void {
  const limits = config.loadShedding;
  const log = new ShedLog(app, registry);
  const lag = new LoopLag();
  let requests = 0;
  let bytes = 0;
  app.decorateRequest('shed', false);
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests being handled',
    registers: [registry],
    collect() {
      this.set(requests);
    },
  });

  if (limits.maxEventLoopDelayMs > 0) {
    app.addHook('onReady', async () => lag.start());
    app.addHook('onListen', async () => lag.reset());
    app.addHook('onClose', async () => lag.stop());
  }

  const overloadedBy = (size: number, writes: boolean): ShedReason | null => {
    if (requests >= limits.maxRequestsInFlight) return 'requests_in_flight';
    if (bytes > 0 && bytes + size > limits.maxBodyBytesInFlight) return 'body_bytes_in_flight';
    if (limits.maxEventLoopDelayMs > 0 && lag.ms() > limits.maxEventLoopDelayMs) return 'event_loop_delay';
    // Reads wait for a connection, and are turned away once its line is half as old as a waiter
    // may get. Write transactions on PostgreSQL have connections of their own, whose line a
    // client's concurrent batches fill by themselves (they queue behind each other for the
    // shop's ids): they are turned away once its oldest waiter is about to give up.
    const { reads, writes: writeLine } = app.database.lines;
    if (reads.oldestWaitMs() > limits.maxQueueWaitMs / 2) return 'database_queue';
    if (writes && writeLine.oldestWaitMs() > (limits.maxQueueWaitMs * 3) / 4) return 'database_queue';
    return null;
  };

  const unavailable = overloaded(limits.retryAfterSeconds);
  const status = errorStatus(unavailable.code);
  /** Whether the request may go on to Fastify; if not, it was answered 503. */
  const admit = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (NEVER_SHED.has(pathOf(request.url))) return true;
    const size = declaredBytes(request, config.bodyLimitBytes);
    const reason = overloadedBy(size, request.method !== 'GET' && request.method !== 'HEAD');
    if (reason !== null) {
      log.record(reason);
      const requestId = newRequestId();
      const body = JSON.stringify(errorBody(unavailable.code, unavailable.message, requestId));
      response.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'x-request-id': requestId,
        ...unavailable.headers,
      });
      response.end(body);
      return false;
    }
    requests++;
    bytes += size;
    // 'close' comes once, whether the response was sent or the client went away.
    response.once('close', () => {
      requests--;
      bytes -= size;
    });
    return true;
  };

  // Node's HTTP server has one request listener, Fastify's: the check is put in front of it.
  const [handler, ...others] = app.server.listeners('request') as ((request: IncomingMessage, response: ServerResponse) => void)[];
  if (handler === undefined || others.length > 0) throw new Error("expected Fastify's request listener alone on the server");
  app.server.removeListener('request', handler);
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (admit(request, response)) handler(request, response);
  });

  // A request that waited too long for a database connection was shed as well, only later:
  // counted, and not logged one by one either.
  app.addHook('onError', async (request, _reply, error) => {
    if (error instanceof DatabaseBusyError) {
      request.shed = true;
      log.record('database_queue');
    }
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Answered 503 because the database's line was too long: not worth a line in the log each. */
    shed: boolean;
  }
}
