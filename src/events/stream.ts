import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, createInbox, headers, type NatsConnection } from '@nats-io/transport-node';
import { Gauge, type Registry } from 'prom-client';
import { transaction, transactionLock } from '../db/dialect.js';
import type { DB, StreamEventsTable } from '../db/tables.js';
import { recordStreamEvents } from './outbox.js';

// The event stream (DESIGN 18, docs/scaling.md). With EVENT_STREAM_URL set, the outbox writes
// every event it records to stream_events as well (events/outbox.ts), in the transaction of what
// it announces. A relay in every serving process claims a batch of them (a lease, claimed_by until
// claimed_until, taken under one short lock so that no two relays ever hold events of the same
// shop at once), publishes each to JetStream's stream LOYALTY as `loyalty.<shop_id>.<topic>` with
// the event id as Nats-Msg-Id, in order per shop, and marks published only the events the stream
// acknowledged. A relay that dies between the acknowledgement and the mark leaves its lease to
// expire; the next publishes those events again and the stream drops the copies (its
// duplicate window). With the broker away the relay claims nothing: the events wait.

export const STREAM_NAME = 'LOYALTY';
export const streamSubject = (shopId: number, topic: string): string => `loyalty.${shopId}.${topic}`;

/** Published events are kept this long (for `loyalty stream status`), then pruned. */
const KEEP_PUBLISHED_MS = 24 * 3_600_000;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 1000;
/** The longest a relay waits for one acknowledgement. */
const ACK_TIMEOUT_MS = 2000;

export type ClaimedEvent = Pick<StreamEventsTable, 'shop_id' | 'id' | 'event_id' | 'topic' | 'payload' | 'created_at'>;

/**
 * Claims up to `limit` unpublished events, oldest first per shop, of shops no other relay holds a
 * live claim on; the claim lasts `leaseMs`. One relay claims at a time (a transaction lock on
 * PostgreSQL; SQLite's writes are serialised): two never split one shop's events between them.
 */
export function claimStreamEvents(
  db: DB,
  owner: string,
  now: number,
  leaseMs: number,
  limit: number,
  settled: readonly Settlement[] = [],
): Promise<ClaimedEvent[]> {
  return transaction(db, async (trx) => {
    // What the last batch came to, written in this transaction: one write per batch, not two.
    await writeSettlements(trx, owner, settled);
    await transactionLock(trx, 'stream:claim');
    const heldByOthers = trx
      .selectFrom('stream_events')
      .select('shop_id')
      .where('published_at', 'is', null)
      .where('claimed_until', '>=', now)
      .where('claimed_by', '<>', owner);
    const oldest = trx
      .selectFrom('stream_events')
      .select(['shop_id', 'id'])
      .where('published_at', 'is', null)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now), eb('claimed_by', '=', owner)]))
      .where('shop_id', 'not in', heldByOthers)
      .orderBy('shop_id')
      .orderBy('id')
      .limit(limit)
      .$asTuple('shop_id', 'id');
    // Claimed in one statement, then read back through the claims' index.
    const until = now + leaseMs;
    await trx
      .updateTable('stream_events')
      .set({ claimed_by: owner, claimed_until: until })
      .where((eb) => eb(eb.refTuple('shop_id', 'id'), 'in', oldest))
      .execute();
    const rows = await trx
      .selectFrom('stream_events')
      .select(['shop_id', 'id', 'event_id', 'topic', 'payload', 'created_at'])
      .where('published_at', 'is', null)
      .where('claimed_until', '=', until)
      .where('claimed_by', '=', owner)
      .orderBy('shop_id')
      .orderBy('id')
      .execute();
    return rows;
  });
}

/** What publishing a shop's claimed events came to: those acknowledged (at `at`), and those given back. */
export interface Settlement {
  shopId: number;
  published: number[];
  released: number[];
  at: number;
}

/** Marks events published (acknowledged by the stream) and gives back the rest of the claims. */
export function settleStreamEvents(db: DB, owner: string, settled: readonly Settlement[]): Promise<void> {
  return settled.length === 0 ? Promise.resolve() : transaction(db, (trx) => writeSettlements(trx, owner, settled));
}

async function writeSettlements(trx: DB, owner: string, settled: readonly Settlement[]): Promise<void> {
  for (const { shopId, published, released, at } of settled) {
    if (published.length > 0) {
      await trx
        .updateTable('stream_events')
        .set({ published_at: at, claimed_by: null, claimed_until: null })
        .where('shop_id', '=', shopId)
        .where('id', 'in', published)
        .execute();
    }
    if (released.length > 0) {
      await trx
        .updateTable('stream_events')
        .set({ claimed_by: null, claimed_until: null })
        .where('shop_id', '=', shopId)
        .where('id', 'in', released)
        .where('claimed_by', '=', owner)
        .execute();
    }
  }
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
  /** Called with each event once the stream acknowledged it (the benchmark's lag). */
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

/** The relay of one serving process: start() once, stop() on shutdown. */
export class StreamRelay {
  readonly owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private nc: NatsConnection | null = null;
  /** The stream's acknowledgements come to one subscription, `<inbox>.<n>` each. */
  private readonly inbox = createInbox();
  private readonly acks = new Map<string, (ack: { error?: { description?: string } }) => void>();
  private nextAck = 0;
  /** Connected, and the stream known to exist since the last (re)connection. */
  private ready = false;
  /** The connection is up (the client reconnects by itself after a loss). */
  private linked = false;
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly pause: { wake?: () => void } = {};
  private lastPrune = 0;
  /** A full batch's marks, written with the next claim. */
  private readonly unsettled: Settlement[] = [];
  private readonly clock: () => number;
  private readonly batch: number;

  constructor(
    private readonly db: DB,
    private readonly options: RelayOptions,
  ) {
    this.clock = options.clock ?? Date.now;
    this.batch = options.batch ?? 1000;
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
    await settleStreamEvents(this.db, this.owner, this.unsettled.splice(0)).catch(() => undefined);
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
    nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (err !== null) return;
        const key = msg.subject.slice(this.inbox.length + 1);
        const settle = this.acks.get(key);
        this.acks.delete(key);
        settle?.(msg.data.length > 0 ? msg.json() : { error: { description: 'empty acknowledgement' } });
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
   * Claims, publishes and settles one batch; returns how many events it claimed. A full batch's
   * marks are written with the next claim (more are waiting); any other, at once.
   */
  private async pass(): Promise<number> {
    const claimed = await claimStreamEvents(this.db, this.owner, this.clock(), this.options.leaseMs, this.batch, this.unsettled.splice(0));
    const shops = new Map<number, ClaimedEvent[]>();
    for (const event of claimed) {
      const shopId = Number(event.shop_id);
      shops.set(shopId, [...(shops.get(shopId) ?? []), event]);
    }
    const results = await Promise.all([...shops].map(([shopId, events]) => this.publishShop(shopId, events)));
    this.unsettled.push(...results.map((r) => r.settlement));
    const failure = results.find((r) => r.error !== undefined);
    if (claimed.length < this.batch || failure !== undefined) await settleStreamEvents(this.db, this.owner, this.unsettled.splice(0));
    if (failure !== undefined) {
      this.ready = false;
      throw failure.error;
    }
    return claimed.length;
  }

  /**
   * Publishes a shop's events in order: all sent at once on the one connection, which the
   * stream stores in the order sent; only the events up to the first not acknowledged count as
   * published, the rest are given back and claimed again (a copy the stream already holds is
   * dropped).
   */
  private async publishShop(shopId: number, events: ClaimedEvent[]): Promise<{ settlement: Settlement; error?: unknown }> {
    const acks = await this.publishAll(shopId, events);
    const failed = acks.findIndex((ack) => ack.status === 'rejected');
    const upTo = failed === -1 ? events.length : failed;
    const at = this.clock();
    const ids = events.map((event) => Number(event.id));
    for (const event of events.slice(0, upTo)) this.options.onPublished?.(event, at);
    const settlement = { shopId, published: ids.slice(0, upTo), released: ids.slice(upTo), at };
    return failed === -1 ? { settlement } : { settlement, error: (acks[failed] as PromiseRejectedResult).reason };
  }

  /**
   * Publishes events as JetStream does (the message with a reply subject, where the stream
   * answers its acknowledgement), with the acknowledgements gathered by one subscription and one
   * timer for the batch rather than a request, a subscription entry and a timer per message.
   */
  private publishAll(shopId: number, events: ClaimedEvent[]): Promise<PromiseSettledResult<unknown>[]> {
    const nc = this.nc!;
    const keys: string[] = [];
    const pending = events.map(
      (event) =>
        new Promise<unknown>((resolve, reject) => {
          const key = String(this.nextAck++);
          keys.push(key);
          this.acks.set(key, (ack) =>
            ack.error === undefined ? resolve(ack) : reject(new Error(`the stream refused ${event.event_id}: ${ack.error.description}`)),
          );
          const h = headers();
          h.set('Nats-Msg-Id', event.event_id);
          nc.publish(streamSubject(shopId, event.topic), event.payload, { headers: h, reply: `${this.inbox}.${key}` });
        }),
    );
    const timer = setTimeout(() => {
      for (const key of keys) {
        const settle = this.acks.get(key);
        this.acks.delete(key);
        settle?.({ error: { description: `no acknowledgement in ${ACK_TIMEOUT_MS} ms` } });
      }
    }, ACK_TIMEOUT_MS);
    return Promise.allSettled(pending).finally(() => clearTimeout(timer));
  }

  private async prune(): Promise<void> {
    const now = this.clock();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await pruneStreamEvents(this.db, now - KEEP_PUBLISHED_MS);
  }
}
