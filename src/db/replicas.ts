import pg from 'pg';
import type { DB } from './tables.js';

// Read replicas (DESIGN 18, docs/scaling.md): PostgreSQL hot standbys that serve reads outside a
// transaction. This keeps each one's state (up, lagging, down), how far it has replayed the
// primary's WAL, and its lag, and chooses the replica a read may use: one that has replayed
// past a position given (a write's Loyalty-Read-After), waiting a bounded time for one, or none
// (the caller then reads the primary). The consistency rules live here and in
// http/read-after.ts; routing a request's queries is http/read-connection.ts's.

export type ReplicaState = 'up' | 'lagging' | 'down';

export interface ReplicaStatus {
  /** host:port of the replica (never its credentials). */
  readonly name: string;
  readonly state: ReplicaState;
  /** How far behind the primary it is, in ms; for one that does not answer, since it last did. */
  readonly lagMs: number;
}

export interface ReplicaSettings {
  /** A replica further behind than this is left out until it catches up. */
  readonly maxLagMs: number;
  /** How long a read waits for a replica to replay past its position before it reads the primary. */
  readonly waitMs: number;
  /** How often each replica's replay and the primary's position are sampled. */
  readonly pollMs?: number;
}

/** A position in the primary's WAL (an LSN, `16/B374D848`) as a number, or null when `text` is not one. */
export function parsePosition(text: string | undefined | null): bigint | null {
  const match = typeof text === 'string' ? /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text.trim()) : null;
  return match === null ? null : (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export interface ReplicaDatabase {
  readonly url: string;
  /** Kysely over the replica's own pool and line (db/connect.ts). */
  readonly db: DB;
}

interface Replica extends ReplicaDatabase {
  readonly name: string;
  /** One connection of its own for the samples, so that a busy pool never delays them. */
  readonly probe: pg.Pool;
  state: ReplicaState;
  replayed: bigint | null;
  lagMs: number;
  /** When it last answered a sample. */
  seenAt: number;
  refreshing: Promise<void> | null;
}

const DEFAULT_POLL_MS = 250;
/** Between two looks at the replicas' replay while a read waits. */
const LOOK_PAUSE_MS = 1;
/** The longest a read's first look at the replicas may take, whatever REPLICA_WAIT_MS. */
const FIRST_LOOK_MS = 100;
/** A sample that takes longer than this counts as no answer. */
const PROBE_TIMEOUT_MS = 1000;

function probePool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
  pool.on('error', () => undefined);
  return pool;
}

async function lsnOf(pool: pg.Pool, text: string): Promise<bigint> {
  const { rows } = await pool.query<{ lsn: string | null }>(text);
  const position = parsePosition(rows[0]?.lsn);
  if (position === null) throw new Error('no WAL position: is it a streaming standby?');
  return position;
}

const nameOf = (url: string) => {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port || '5432'}`;
};

export class Replicas {
  readonly #replicas: Replica[];
  readonly #primary: pg.Pool;
  readonly #settings: Required<ReplicaSettings>;
  /** The primary's position sampled over the last while, oldest first: a replica's lag is read off them. */
  readonly #samples: { at: number; lsn: bigint }[] = [];
  #timer: NodeJS.Timeout | null = null;
  #next = 0;

  constructor(primaryUrl: string, replicas: readonly ReplicaDatabase[], settings: ReplicaSettings) {
    this.#settings = { pollMs: DEFAULT_POLL_MS, ...settings };
    this.#primary = probePool(primaryUrl, 2);
    const now = Date.now();
    this.#replicas = replicas.map((r) => ({
      ...r,
      name: nameOf(r.url),
      probe: probePool(r.url, 1),
      state: 'down',
      replayed: null,
      lagMs: 0,
      seenAt: now,
      refreshing: null,
    }));
  }

  /** Samples at once, then every pollMs. */
  async start(): Promise<void> {
    await this.sample();
    this.#timer = setInterval(() => void this.sample(), this.#settings.pollMs);
    this.#timer.unref();
  }

  statuses(): ReplicaStatus[] {
    return this.#replicas.map((r) => ({ name: r.name, state: r.state, lagMs: r.state === 'down' ? Date.now() - r.seenAt : r.lagMs }));
  }

  /** The primary's position now: after a commit, a replica that has replayed past it holds that commit. */
  async position(): Promise<string> {
    const lsn = await lsnOf(this.#primary, 'select pg_current_wal_lsn()::text as lsn');
    this.#remember(Date.now(), lsn);
    return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
  }

  /**
   * The replica a read may use that has replayed past `after` (null: any that serves reads),
   * waiting up to waitMs for one; null when none does in time: the read goes to the primary.
   */
  async reader(after: bigint | null): Promise<DB | null> {
    let up = this.#replicas.filter((r) => r.state === 'up');
    if (up.length === 0) return null;
    if (after === null) return this.#pick(up);
    const deadline = performance.now() + this.#settings.waitMs;
    for (let look = 0; ; look++) {
      const past = up.filter((r) => r.replayed !== null && r.replayed >= after);
      if (past.length > 0) return this.#pick(past);
      // One fresh look at least (REPLICA_WAIT_MS=0: that look alone, then the primary).
      const left = deadline - performance.now();
      if (look > 0 && left <= 0) return null;
      // A replica slow to answer may not hold the read past its bound (the first look: 100 ms at least).
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise((resolve) => (timer = setTimeout(resolve, look === 0 ? Math.max(left, FIRST_LOOK_MS) : left)));
      await Promise.race([Promise.all(up.map((r) => this.#refresh(r))), bound]);
      clearTimeout(timer);
      up = up.filter((r) => r.state === 'up');
      if (up.length === 0) return null;
      // A replica on the same network replays a commit within a few ms (2 ms at the median here);
      // a look is one query per replica however many reads wait, and the pause between looks
      // keeps them from taking the CPU the replay needs.
      if (!up.some((r) => r.replayed !== null && r.replayed >= after)) await new Promise((resolve) => setTimeout(resolve, LOOK_PAUSE_MS));
    }
  }

  /** A replica whose query failed as a connection fails: left out until a sample finds it again. */
  failed(db: DB): void {
    const replica = this.#replicas.find((r) => r.db === db);
    if (replica !== undefined && replica.state !== 'down') {
      replica.state = 'down';
      replica.seenAt = Date.now();
    }
  }

  /** One sample: the primary's position, then each replica's replay and lag. */
  async sample(): Promise<void> {
    try {
      this.#remember(Date.now(), await lsnOf(this.#primary, 'select pg_current_wal_lsn()::text as lsn'));
    } catch {
      // The primary not answering is /readyz's to say; the replicas keep their last lag.
    }
    await Promise.all(this.#replicas.map((r) => this.#refresh(r)));
  }

  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await Promise.all([this.#primary.end(), ...this.#replicas.map((r) => r.probe.end())]);
  }

  #pick(replicas: Replica[]): DB {
    return replicas[this.#next++ % replicas.length]!.db;
  }

  #remember(at: number, lsn: bigint): void {
    const last = this.#samples.at(-1);
    if (last !== undefined && lsn <= last.lsn) return;
    this.#samples.push({ at, lsn });
    // Samples older than the longest lag that matters tell nothing more.
    const horizon = at - 2 * this.#settings.maxLagMs - 2 * this.#settings.pollMs;
    while (this.#samples.length > 1 && this.#samples[1]!.at < horizon) this.#samples.shift();
  }

  /** Since when the primary has held WAL that `replayed` lacks: the first sample beyond it. */
  #lag(replayed: bigint, now: number): number {
    const behind = this.#samples.find((s) => s.lsn > replayed);
    return behind === undefined ? 0 : now - behind.at;
  }

  /** Reads a replica's replay position (one at a time per replica, shared by whoever asks). */
  #refresh(replica: Replica): Promise<void> {
    replica.refreshing ??= lsnOf(replica.probe, 'select pg_last_wal_replay_lsn()::text as lsn')
      .then((lsn) => {
        const now = Date.now();
        replica.replayed = replica.replayed !== null && replica.replayed > lsn && replica.state !== 'down' ? replica.replayed : lsn;
        replica.seenAt = now;
        replica.lagMs = this.#lag(replica.replayed, now);
        replica.state = replica.lagMs > this.#settings.maxLagMs ? 'lagging' : 'up';
      })
      .catch(() => {
        if (replica.state !== 'down') replica.state = 'down';
      })
      .finally(() => {
        replica.refreshing = null;
      });
    return replica.refreshing;
  }
}
