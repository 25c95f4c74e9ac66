import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Config } from '../config.js';
import { DatabaseBusyError } from '../db/connection-queue.js';
import { errorStatus, type AppError } from '../errors.js';
import { errorBody, overloaded, tooLarge } from './error-handler.js';
import { SHOP_WRITERS, ShopWriteLines } from './shop-writes.js';

// Load shedding: a request the process cannot finish within a second or so is answered 503 with
// Retry-After at once, before its body is read and before Fastify sees it, rather than left
// waiting. What is bounded:
// - requests being handled, and the body bytes they declared (memory and CPU);
// - the event loop's lag that the process's own work caused, read as it is now, not only at the
//   last sample (CPU);
// - the lines for a database connection: new requests are turned away once its oldest waiter
//   has waited half of MAX_QUEUE_WAIT_MS (writes also once the oldest waiter for a write
//   connection has waited three quarters of it, or a shop's line of writes is that long), and a
//   waiter that reaches it gives up (db/connection-queue.ts).
// Lag and the lines say the server is late, not why. On a shared machine a neighbour that takes
// the cores, or a disk that makes one fsync last 300 ms, makes it late with one request in
// flight: that is not overload, and shedding would only turn away the one client there is. So
// lag counts only as far as the process spent CPU on it, and neither lag nor the lines shed
// while fewer requests are being handled than the database has connections (at least
// MIN_CONCURRENCY): with so few, no request waits behind another's work for long. (For lag,
// "being handled" is per turn of the event loop: LoopLag says why.)
// Shed requests are counted in /metrics and logged at most once a second, never one by one.
// A body declared larger than the limit is answered 413 here too, after it has been read and
// dropped: answered at once and the connection closed, a client still sending it would see
// its write fail (EPIPE) instead of the answer. A shed request's 503 also waits for its body
// (a moment): answered before the body has been sent, most clients (fetch, undici, browsers)
// close the connection and open another, and Node accepts one new connection per turn of the
// event loop, so under a flood the new ones wait seconds in the kernel's queue before a byte
// of them is read. A connection that stays open is read at once.

export type ShedReason = 'requests_in_flight' | 'body_bytes_in_flight' | 'event_loop_delay' | 'database_queue';

/** Answered whatever the load: a prober or a scraper must see the process as it is. */
const NEVER_SHED = new Set(['/healthz', '/metrics']);

const SAMPLE_MS = 50;
/** Samples of lag kept: a loop held by the process's own work sheds for as many samples after (200 ms). */
const SAMPLES_KEPT = 4;

/** Requests in flight below which lag and the database's lines never shed (or the database's connections, if more). */
export const MIN_CONCURRENCY = 4;

/**
 * Requests in one turn of the event loop below which its lag is their own cost (LoopLag). Ten
 * clients posting batches of a thousand grants make a turn late by a few hundred ms of CPU when
 * two batches land in it together; a flood puts dozens to hundreds of requests in every turn.
 */
export const LAG_TURN_REQUESTS = 16;

/** The requests a turn must have handled for its lag to count: LAG_TURN_REQUESTS, or the floor of the lines if more. */
export const lagFloor = (connections: number): number => Math.max(LAG_TURN_REQUESTS, MIN_CONCURRENCY, connections);

/**
 * How long a shed request's body is read, at most, before its 503 (see the top): a body that
 * takes longer (a slow or stalled upload) gets its answer at once, and the connection closes.
 */
const SHED_BODY_WAIT_MS = 250;

/** A body declared larger than this is not read to its end before the 413: the connection is closed instead. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

/** The CPU time this process has used, in ms (every thread: GC's and libuv's too, so it errs towards more). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The event loop's lag that the process's own work on its traffic caused: how late a timer
 * fires, counted only as far as the process used CPU meanwhile, and only for turns of the loop
 * (between two samples) in which it handled at least `floor` requests (that many arrived, or
 * were in flight when the turn began).
 * - A loop held by handlers is late by about the CPU they spent; a process that the kernel did
 *   not run (other processes took the cores) or that waited on a slow fsync is late by as much
 *   with little CPU spent, and that is not load the server can shed.
 * - On SQLite a request often runs whole, from its first byte to its answer, within the turn it
 *   arrives in: a flood shows as many requests in one late turn, never as many in flight. A late
 *   turn with one or two requests in it is their own cost, which shedding others would not cut.
 * Read between samples, a timer that is overdue counts too, so a loop blocked right now is seen
 * now. The highest of the last few samples counts, so a burst of work sheds for a while after.
 * Measured from when the app is ready, so the work of starting up is never taken for overload.
 */
class LoopLag {
  #expected = 0;
  #cpuAt = 0;
  /** Requests that arrived since the last sample, and those in flight when it was taken. */
  #arrived = 0;
  #inFlightAt = 0;
  /** The last samples' lag, newest last (0 for a turn with fewer requests than the floor). */
  readonly #samples: number[] = [];
  #lag = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The last reading of the process's CPU time, and when it was taken. */
  #cpuRead = 0;
  #cpuReadAt = -Infinity;

  constructor(
    private readonly floor: number,
    private readonly inFlight: () => number,
  ) {}

  start(): void {
    this.reset();
    this.#timer = setInterval(() => {
      const now = performance.now();
      const cpu = cpuMs();
      this.#samples.push(this.#busy() ? Math.min(Math.max(0, now - this.#expected), cpu - this.#cpuAt) : 0);
      if (this.#samples.length > SAMPLES_KEPT) this.#samples.shift();
      this.#lag = Math.max(...this.#samples);
      this.#expected = now + SAMPLE_MS;
      this.#cpuAt = cpu;
      this.#arrived = 0;
      this.#inFlightAt = this.inFlight();
    }, SAMPLE_MS);
    this.#timer.unref();
  }

  /** Forgets what was measured so far (the work between ready and listening). */
  reset(): void {
    this.#lag = 0;
    this.#samples.length = 0;
    this.#expected = performance.now() + SAMPLE_MS;
    this.#cpuAt = cpuMs();
    this.#arrived = 0;
    this.#inFlightAt = this.inFlight();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** A request arrived (answered or not). */
  arrived(): void {
    this.#arrived++;
  }

  #busy(): boolean {
    // Not their sum: a client whose request was in flight may send its next one in the same turn.
    return Math.max(this.#arrived, this.#inFlightAt) >= this.floor;
  }

  ms(): number {
    if (this.#timer === undefined) return 0;
    const overdue = performance.now() - this.#expected;
    if (overdue <= this.#lag || !this.#busy()) return this.#lag;
    return Math.max(this.#lag, Math.min(overdue, this.#cpuNow() - this.#cpuAt));
  }

  /**
   * The process's CPU time, read at most once a millisecond: ms() runs for every request that
   * arrives, and under a flood reading it each time (a system call) was 2.7% of the process's CPU.
   */
  #cpuNow(): number {
    const now = performance.now();
    if (now - this.#cpuReadAt >= 1) {
      this.#cpuReadAt = now;
      this.#cpuRead = cpuMs();
    }
    return this.#cpuRead;
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

/** The body length a request declares in Content-Length; -1 when it declares none. */
function declaredLength(request: IncomingMessage): number {
  const length = request.headers['content-length'];
  return length === undefined ? -1 : Number(length) || 0;
}

/** The path of a raw request's URL, without its query and trailing slash (as the router ignores it). */
function pathOf(url: string | undefined): string {
  const end = url === undefined ? 0 : url.indexOf('?');
  const path = url === undefined ? '' : end < 0 ? url : url.slice(0, end);
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** Answers `error` in the error shape, outside Fastify. */
function answer(response: ServerResponse, error: AppError, requestId: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(errorBody(error.code, error.message, requestId));
  response.writeHead(errorStatus(error.code), {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    ...error.headers,
    ...headers,
  });
  response.end(body);
}

/**
 * Answers `error` once the request's body, if it has one, has been read and dropped (see the
 * top). Past DRAIN_LIMIT_BYTES declared, or once `waitMs` have passed without the body's end,
 * it answers at once and closes the connection.
 */
function refuseAfterBody(request: IncomingMessage, response: ServerResponse, error: AppError, newRequestId: () => string, waitMs = Infinity): void {
  const declared = declaredLength(request);
  if (declared > DRAIN_LIMIT_BYTES) return answer(response, error, newRequestId(), { connection: 'close' });
  if (declared <= 0 && request.headers['transfer-encoding'] === undefined) return answer(response, error, newRequestId());
  const timer = Number.isFinite(waitMs) ? setTimeout(() => answer(response, error, newRequestId(), { connection: 'close' }), waitMs) : undefined;
  request.once('end', () => {
    clearTimeout(timer);
    if (!response.headersSent) answer(response, error, newRequestId());
  });
  request.resume();
}

/**
 * Whether a request would wait too long in the database's lines. Reads wait for a connection,
 * and are turned away once its line is half as old as a waiter may get. Write transactions have
 * connections of their own, whose line a client's concurrent batches fill by themselves (they
 * queue behind each other for the shop's ids): they are turned away once its oldest waiter is
 * about to give up. So are they once a shop's own line (http/shop-writes.ts) is as long in time
 * at its recent pace: a batch that starts late must still end in time, and under 500 clients
 * each of a shop's batches held its turn 0.4-0.9 s. (Without it, 2 of 6 runs of the PostgreSQL
 * overload benchmark had batches answered after 2 s; with it, none of 6.) On SQLite reads have
 * a connection of their own that never waits for the writer (db/connect.ts).
 */
function linesLate(app: FastifyInstance, maxQueueWaitMs: number, writes: boolean): boolean {
  const { reads, writes: writeLine } = app.database.lines;
  if (reads.oldestWaitMs() > maxQueueWaitMs / 2) return true;
  return writes && Math.max(writeLine.oldestWaitMs(), app.shopWrites.waitMs()) > (maxQueueWaitMs * 3) / 4;
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
  const floor = Math.max(MIN_CONCURRENCY, app.database.connections);
  let requests = 0;
  const lag = new LoopLag(lagFloor(app.database.connections), () => requests);
  // Each shop's line of writes, patient below the floor (http/shop-writes.ts).
  const shopWriters = app.database.dialect === 'postgres' ? SHOP_WRITERS : Infinity;
  app.decorate('shopWrites', new ShopWriteLines(shopWriters, limits.maxQueueWaitMs, () => requests < floor));
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

  /** Why a request arriving beside `others` being handled would be shed, if it would. */
  const overloadedBy = (others: number, size: number, writes: boolean): ShedReason | null => {
    if (others >= limits.maxRequestsInFlight) return 'requests_in_flight';
    if (bytes > 0 && bytes + size > limits.maxBodyBytesInFlight) return 'body_bytes_in_flight';
    if (limits.maxEventLoopDelayMs > 0 && lag.ms() > limits.maxEventLoopDelayMs) return 'event_loop_delay';
    if (others < floor) return null;
    return linesLate(app, limits.maxQueueWaitMs, writes) ? 'database_queue' : null;
  };
  // /readyz asks whether a request arriving now would be served, beside every other one but itself.
  app.decorate('wouldShed', () => overloadedBy(requests - 1, 0, false));

  const unavailable = overloaded(limits.retryAfterSeconds);
  /** Whether the request may go on to Fastify; if not, it was answered (413 or 503). */
  const admit = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (NEVER_SHED.has(pathOf(request.url))) return true;
    lag.arrived();
    const declared = declaredLength(request);
    if (declared > config.bodyLimitBytes) {
      refuseAfterBody(request, response, tooLarge(), newRequestId);
      return false;
    }
    const size = declared >= 0 ? declared : request.headers['transfer-encoding'] === undefined ? 0 : config.bodyLimitBytes;
    const reason = overloadedBy(requests, size, request.method !== 'GET' && request.method !== 'HEAD');
    if (reason !== null) {
      log.record(reason);
      refuseAfterBody(request, response, unavailable, newRequestId, SHED_BODY_WAIT_MS);
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
  interface FastifyInstance {
    /** Why a request arriving now would be answered 503, or null when it would be served. */
    wouldShed(): ShedReason | null;
    /** The lines of each shop's write transactions (http/shop-writes.ts). */
    shopWrites: ShopWriteLines;
  }
}
