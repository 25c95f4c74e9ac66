import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, createInbox, headers, type NatsConnection } from '@nats-io/transport-node';
import { Gauge, type Registry } from 'prom-client';
import { insertRows, transaction, transactionLock } from '../db/dialect.js';
import type { DB, StreamEventsTable } from '../db/tables.js';
import { recordStreamEvents } from './outbox.js';

// The event stream (DESIGN 18, docs/scaling.md). With EVENT_STREAM_URL set, the outbox writes
// every event it records to stream_events as well (events/outbox.ts), in the transaction of what
// it announces. A relay in every serving process claims a batch of them: it leases their shops
// (stream_leases: claimed_by until claimed_until, taken under one short lock, so that no two
// relays ever hold events of the same shop at once) and reads the events, oldest first per shop.
// It publishes each to JetStream's stream LOYALTY as `loyalty.<shop_id>.<topic>` with the event
// id as Nats-Msg-Id, in order per shop, claiming and sending the next batch while the stream
// stores the last, and marks published only the events the stream acknowledged. A relay that
// dies between the acknowledgement and the mark leaves its leases to expire; the next publishes
// those events again and the stream drops the copies (its duplicate window). With the broker
// away the relay claims nothing: the events wait.

export const STREAM_NAME = 'LOYALTY';
export const streamSubject = (shopId: number, topic: string): string => `loyalty.${shopId}.${topic}`;

const textDecoder = new TextDecoder();

/** Published events are kept this long (for `loyalty stream status`), then pruned. */
const KEEP_PUBLISHED_MS = 24 * 3_600_000;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 1000;
/** The longest a relay waits for one acknowledgement. */
const ACK_TIMEOUT_MS = 2000;

export type ClaimedEvent = Pick<StreamEventsTable, 'shop_id' | 'id' | 'event_id' | 'topic' | 'payload' | 'created_at'>;

/**
 * Claims up to `limit` unpublished events, oldest first per shop, of shops no other relay holds a
 * live lease on, and leases their shops (and those of `sent`) for `leaseMs`. One relay claims at a
 * time (a transaction lock on PostgreSQL; SQLite's writes are serialised): two never split one
 * shop's events between them. The events are read, not written: a lease is one row per shop.
 * `sent` (shop → the last event id of it that the relay has sent and not yet settled) leaves out
 * what the relay is already publishing, so that it may claim the next batch meanwhile.
 */
export function claimStreamEvents(
  db: DB,
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
  settled: readonly Settlement[] = [],
  sent: ReadonlyMap<number, number> = new Map(),
): Promise<ClaimedEvent[]> {
  return transaction(db, async (trx) => {
    // What the last batch came to, written in this transaction: one write per batch, not two.
    await writeSettlements(trx, owner, settled);
    await transactionLock(trx, 'stream:claim');
    const leasedByOthers = trx.selectFrom('stream_leases').select('shop_id').where('claimed_until', '>=', now).where('claimed_by', '<>', owner);
    let oldest = trx
      .selectFrom('stream_events')
      .select(['shop_id', 'id', 'event_id', 'topic', 'payload', 'created_at'])
      .where('published_at', 'is', null)
      .where('shop_id', 'not in', leasedByOthers);
    if (sent.size > 0) oldest = oldest.where((eb) => eb.and([...sent].map(([shopId, last]) => eb.or([eb('shop_id', '<>', shopId), eb('id', '>', last)]))));
    const rows = await oldest.orderBy('shop_id').orderBy('id').limit(limit).execute();
    const shops = new Set([...sent.keys(), ...rows.map((row) => Number(row.shop_id))]);
    if (shops.size > 0) {
      const leases = [...shops].map((shopId) => ({ shop_id: shopId, claimed_by: owner, claimed_until: now + leaseMs }));
      await insertRows(trx, 'stream_leases', leases, { key: ['shop_id'], update: ['claimed_by', 'claimed_until'] });
    }
    return rows;
  });
}

/**
 * What publishing a batch of a shop's events came to: the first and last id of those the stream
 * acknowledged (at `at`), if any, and whether the shop's lease goes (the relay has nothing else
 * of it in flight). Within a shop, ids commit in order (db/dialect.ts allocateIdsOf), so every
 * unpublished event of the shop between the two was in the batch.
 */
export interface Settlement {
  shopId: number;
  published: { from: number; to: number } | null;
  at: number;
  release: boolean;
}

/** Marks events published (acknowledged by the stream) and gives back the leases of shops done with. */
export function settleStreamEvents(db: DB, owner: string, settled: readonly Settlement[]): Promise<void> {
  return settled.length === 0 ? Promise.resolve() : transaction(db, (trx) => writeSettlements(trx, owner, settled));
}

async function writeSettlements(trx: DB, owner: string, settled: readonly Settlement[]): Promise<void> {
  for (const { shopId, published, at } of settled) {
    if (published === null) continue;
    await trx
      .updateTable('stream_events')
      .set({ published_at: at })
      .where('shop_id', '=', shopId)
      .where('id', '>=', published.from)
      .where('id', '<=', published.to)
      .where('published_at', 'is', null)
      .execute();
  }
  const released = settled.filter((s) => s.release).map((s) => s.shopId);
  if (released.length > 0) await trx.deleteFrom('stream_leases').where('claimed_by', '=', owner).where('shop_id', 'in', released).execute();
}

/** Gives back every lease of a relay (one stopping). */
export async function releaseStreamLeases(db: DB, owner: string): Promise<void> {
  await db.deleteFrom('stream_leases').where('claimed_by', '=', owner).execute();
}

/** Deletes at most `limit` events published before `before`; returns how many. */
export async function pruneStreamEvents(db: DB, before: number, limit = PRUNE_BATCH): Promise<number> {
  const oldest = db
    .selectFrom('stream_events')
    .select(['shop_id', 'id'])
    .where('published_at', 'is not', null)
    .where('published_at', '<', before)
    .orderBy('published_at')
    .limit(limit)
    .$asTuple('shop_id', 'id');
  const result = await db
    .deleteFrom('stream_events')
    .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', oldest))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface StreamStatus {
  /** Events not yet acknowledged by the stream. */
  backlog: number;
  /** When the oldest of them was recorded (ms), or null. */
  oldest_pending_at: number | null;
  last_published: { shop_id: number; event_id: string; topic: string; created_at: number; published_at: number } | null;
}

export async function streamBacklog(db: DB): Promise<number> {
  const row = await db
    .selectFrom('stream_events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('published_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function streamStatus(db: DB): Promise<StreamStatus> {
  const pending = await db
    .selectFrom('stream_events')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('published_at', 'is', null)
    .executeTakeFirstOrThrow();
  const last = await db
    .selectFrom('stream_events')
    .select(['shop_id', 'event_id', 'topic', 'created_at', 'published_at'])
    .where('published_at', 'is not', null)
    .orderBy('published_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return {
    backlog: Number(pending.n),
    oldest_pending_at: pending.oldest === null ? null : Number(pending.oldest),
    last_published:
      last === undefined ? null : { ...last, shop_id: Number(last.shop_id), created_at: Number(last.created_at), published_at: Number(last.published_at) },
  };
}

/** `loyalty_event_stream_backlog`: events recorded and not yet acknowledged (the same in every process). */
export function registerStreamMetrics(registry: Registry, db: DB): void {
  new Gauge({
    name: 'loyalty_event_stream_backlog',
    help: 'Events in the outbox not yet acknowledged by the event stream',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      this.set(await streamBacklog(db));
    },
  });
}

/**
 * The event stream (DESIGN 18) as EVENT_STREAM_URL says: when set, every event also goes to the
 * stream's outbox and /metrics shows its backlog; when not, the outbox is as it always was.
 */
export function registerEventStream(url: string | null, registry: Registry, db: DB): void {
  recordStreamEvents(url !== null);
  if (url !== null) registerStreamMetrics(registry, db);
}

export interface RelayOptions {
  url: string;
  pollMs: number;
  leaseMs: number;
  /** Events claimed at once (default 1000: a batch of the API's writes). */
  batch?: number;
  clock?: () => number;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /**
   * Batches in flight at once (default 3: the next are claimed and sent while the stream stores
   * one; under bench scale on SQLite, p99 1.4-1.9 s against 2.2-3.3 s with 2, at load 9).
   */
  inFlight?: number;
  /** Called with each event once the stream acknowledged it. */
  onPublished?: (event: ClaimedEvent, at: number) => void;
}

const sleep = (ms: number, signal: { wake?: () => void }) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });

/**
 * A batch sent and not yet settled: its events in claim order (by shop, then id), and each one's
 * acknowledgement as it comes: `true`, or why the stream refused it.
 */
interface Flight {
  events: ClaimedEvent[];
  acks: (true | string | undefined)[];
  waiting: number;
  /** Resolved once every event has its acknowledgement or the time is up. */
  done: Promise<void>;
  /** Resolves `done` (the last acknowledgement came). */
  finish: () => void;
}

/** A batch's events (ordered by shop, then id) as runs of one shop: [shop, first index, last index]. */
function* shopRanges(events: readonly ClaimedEvent[]): Generator<[number, number, number]> {
  for (let from = 0, i = 1; i <= events.length; i++) {
    if (i === events.length || events[i]!.shop_id !== events[from]!.shop_id) {
      yield [Number(events[from]!.shop_id), from, i - 1];
      from = i;
    }
  }
}

/** With more shops than this in flight, a relay waits for its batches before it claims again. */
const MAX_SHOPS_IN_FLIGHT = 64;

/** The relay of one serving process: start() once, stop() on shutdown. */
export class StreamRelay {
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private nc: NatsConnection | null = null;
  /** The stream's acknowledgements come to one subscription, `<inbox>.<flight>.<index>` each. */
  private readonly inbox = createInbox();
  /** Batches sent, oldest first, with their numbers in the reply subjects. */
  private readonly flights = new Map<string, Flight>();
  private nextFlight = 0;
  /** Connected, and the stream known to exist since the last (re)connection. */
  private ready = false;
  /** The connection is up (the client reconnects by itself after a loss). */
  private linked = false;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly pause: { wake?: () => void } = {};
  private lastPrune = 0;
  /** Landed batches' marks, written with the next claim. */
  private readonly unsettled: Settlement[] = [];
  private readonly clock: () => number;
  private readonly batch: number;
  private readonly depth: number;

  constructor(
    private readonly db: DB,
    private readonly options: RelayOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.batch = options.batch ?? 1000;
    this.depth = options.inFlight ?? 3;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Whether the broker is connected and the stream ready. */
  get connected(): boolean {
    return this.ready;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.pause.wake?.();
    await this.loop;
    await this.land(this.flights.size).catch(() => undefined);
    await settleStreamEvents(this.db, this.owner, this.unsettled.splice(0)).catch(() => undefined);
    await releaseStreamLeases(this.db, this.owner).catch(() => undefined);
    await this.nc?.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let full = false;
      try {
        if (this.nc === null) await this.connect();
        if (this.nc !== null && this.linked && !this.ready) await this.ensureStream();
        if (this.ready) full = (await this.pass()) >= this.batch;
        await this.prune();
      } catch (err) {
        this.options.log.warn({ err: (err as Error).message }, 'event stream relay: will try again');
      }
      if (!full && !this.stopped) await sleep(this.ready ? this.options.pollMs : 1000, this.pause);
    }
  }

  /** One attempt; the client then reconnects by itself for good. */
  private async connect(): Promise<void> {
    const servers = this.options.url.split(',').map((s) => s.trim());
    const nc = await connect({ servers, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 2000, name: `loyalty relay ${this.owner}` });
    if (this.stopped) {
      await nc.close();
      return;
    }
    this.nc = nc;
    this.linked = true;
    nc.subscribe(`${this.inbox}.*.*`, {
      callback: (err, msg) => {
        if (err === null) this.acknowledged(msg.subject, msg.data);
      },
    });
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') this.linked = this.ready = false;
        // After a reconnection the stream may be new (a broker that lost its storage): checked again.
        if (status.type === 'reconnect') {
          this.linked = true;
          this.pause.wake?.();
        }
      }
    })();
    this.options.log.info({ url: this.options.url }, 'event stream relay connected');
  }

  /** The stream's answer to one message: `{"stream":…,"seq":…}`, or `{"error":{…}}`. */
  private acknowledged(subject: string, data: Uint8Array): void {
    const [flightNo, index] = subject.slice(this.inbox.length + 1).split('.');
    const flight = this.flights.get(flightNo!);
    const i = Number(index);
    if (flight === undefined || flight.acks[i] !== undefined) return;
    let refused: string | undefined;
    try {
      const ack = JSON.parse(textDecoder.decode(data)) as { error?: { description?: string } };
      refused = ack.error === undefined ? undefined : (ack.error.description ?? 'refused');
    } catch {
      refused = 'no acknowledgement';
    }
    flight.acks[i] = refused ?? true;
    if (--flight.waiting === 0) flight.finish();
  }

  /** The stream LOYALTY, created when missing. */
  private async ensureStream(): Promise<void> {
    if (this.nc === null || this.nc.isClosed()) return;
    const jsm = await jetstreamManager(this.nc, { timeout: ACK_TIMEOUT_MS });
    try {
      await jsm.streams.info(STREAM_NAME);
    } catch (err) {
      if (!/not found/i.test((err as Error).message)) throw err;
      await jsm.streams.add({ name: STREAM_NAME, subjects: ['loyalty.>'] });
      this.options.log.info({ stream: STREAM_NAME }, 'event stream created');
    }
    this.ready = true;
  }

  /**
   * Claims the next batch (leaving out what is in flight) and sends it, then waits for the
   * acknowledgements of all but the newest `depth - 1` batches: the next claim overlaps the
   * stream's work on this one. Returns how many events it claimed. A full batch's marks are
   * written with the next claim (more are waiting); any other, at once.
   */
  private async pass(): Promise<number> {
    // Too many shops in flight to leave them out of a claim by condition: the batches land first.
    const early = this.sentByShop().size > MAX_SHOPS_IN_FLIGHT ? await this.land(this.flights.size) : undefined;
    const claimed =
      early === undefined
        ? await claimStreamEvents(this.db, this.owner, this.clock(), this.options.leaseMs, this.batch, this.unsettled.splice(0), this.sentByShop())
        : [];
    if (claimed.length > 0) this.send(claimed);
    const full = claimed.length >= this.batch;
    const failure = (await this.land(this.flights.size - (full ? this.depth - 1 : 0))) ?? early;
    if (!full || failure !== undefined) await settleStreamEvents(this.db, this.owner, this.unsettled.splice(0));
    if (failure !== undefined) {
      this.ready = false;
      throw failure;
    }
    return claimed.length;
  }

  /** The last event id of each shop in flight. */
  private sentByShop(): Map<number, number> {
    const sent = new Map<number, number>();
    for (const { events } of this.flights.values()) for (const event of events) sent.set(Number(event.shop_id), Number(event.id));
    return sent;
  }

  /**
   * Publishes a batch as JetStream does (each message with a reply subject, where the stream
   * answers its acknowledgement), in order on the one connection, which the stream stores in the
   * order sent; the acknowledgements come to one subscription, with one timer for the batch.
   */
  private send(events: ClaimedEvent[]): void {
    const nc = this.nc!;
    const flightNo = String(this.nextFlight++);
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ACK_TIMEOUT_MS);
      finish = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const flight: Flight = { events, acks: new Array<true | string | undefined>(events.length), waiting: events.length, done, finish };
    this.flights.set(flightNo, flight);
    const reply = `${this.inbox}.${flightNo}.`;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const h = headers();
      h.set('Nats-Msg-Id', event.event_id);
      nc.publish(streamSubject(Number(event.shop_id), event.topic), event.payload, { headers: h, reply: reply + i });
    }
  }

  /**
   * Waits for the oldest `count` batches in flight (all of them once one failed) and turns them
   * into settlements. Returns the first refusal, if any.
   */
  private async land(count: number): Promise<Error | undefined> {
    let failure: Error | undefined;
    for (let landed = 0; this.flights.size > 0 && (landed < count || failure !== undefined); landed++) {
      const [flightNo, flight] = this.flights.entries().next().value as [string, Flight];
      await flight.done;
      this.flights.delete(flightNo);
      failure = this.settleFlight(flight, failure) ?? failure;
    }
    return failure;
  }

  /**
   * A landed batch's settlements, per shop: only the events up to the first one not acknowledged
   * count as published; the rest, and all of every batch landed after a failure, are given back
   * and claimed again (a copy the stream already holds is dropped). Returns the first refusal.
   */
  private settleFlight(flight: Flight, failedBefore: Error | undefined): Error | undefined {
    const at = this.clock();
    const remaining = this.sentByShop();
    let failure: Error | undefined;
    for (const [shopId, from, to] of shopRanges(flight.events)) {
      let upTo = from - 1;
      if (failedBefore === undefined) while (upTo < to && flight.acks[upTo + 1] === true) upTo++;
      if (failedBefore === undefined && upTo < to && failure === undefined) {
        const refused = flight.acks[upTo + 1] ?? `no acknowledgement in ${ACK_TIMEOUT_MS} ms`;
        failure = new Error(`the stream refused ${flight.events[upTo + 1]!.event_id}: ${refused}`);
      }
      for (let i = from; i <= upTo; i++) this.options.onPublished?.(flight.events[i]!, at);
      const published = upTo >= from ? { from: Number(flight.events[from]!.id), to: Number(flight.events[upTo]!.id) } : null;
      this.unsettled.push({ shopId, published, at, release: !remaining.has(shopId) });
    }
    return failure;
  }

  private async prune(): Promise<void> {
    const now = this.clock();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await pruneStreamEvents(this.db, now - KEEP_PUBLISHED_MS);
  }
}
