// The line in front of the database's connections: SQLite has one (a transaction holds it across
// awaits), PostgreSQL's pool a few. Under more load than the database can take, the line is where
// requests wait, so it is where waiting is bounded: a caller that has waited maxWaitMs gives up
// with DatabaseBusyError (503 to an HTTP client), and the age of the oldest waiter tells the
// HTTP layer to turn new requests away before they join the line.

/** No connection came free in time; nothing was done. */
export class DatabaseBusyError extends Error {
  constructor(waitedMs: number) {
    super(`No database connection came free within ${Math.round(waitedMs)} ms`);
    this.name = 'DatabaseBusyError';
  }
}

/** The weight of the newest hold in the line's average hold (an exponential average). */
const HOLD_WEIGHT = 0.2;

interface Waiter {
  since: number;
  grant(release: () => void): void;
  refuse(error: DatabaseBusyError): void;
  timer: NodeJS.Timeout | undefined;
}

export class ConnectionQueue {
  #free: number;
  readonly #permits: number;
  /** How long a holder has kept its permit, on average over the last holds. */
  #holdMs = 0;
  // Insertion order is arrival order; a waiter that times out leaves from wherever it is.
  readonly #waiters = new Set<Waiter>();

  constructor(
    permits: number,
    /** Infinity: wait as long as it takes (the CLI). */
    readonly maxWaitMs: number = Infinity,
    /**
     * Hand a released permit to the next waiter on the event loop's next turn (SQLite), not at
     * once (PostgreSQL, whose holders wait on the network and leave the loop free).
     */
    readonly nextTurn = false,
    /** While this says so, a waiter whose maxWaitMs has passed waits on (a lone client's own line is not overload). */
    private readonly patient: () => boolean = () => false,
  ) {
    this.#free = permits;
    this.#permits = permits;
  }

  /** Resolves with the function that gives the connection back, once one is free. */
  acquire(): Promise<() => void> {
    if (this.#free > 0 && this.#waiters.size === 0) {
      this.#free--;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { since: performance.now(), grant: resolve, refuse: reject, timer: undefined };
      if (Number.isFinite(this.maxWaitMs)) waiter.timer = setTimeout(() => this.#expire(waiter), this.maxWaitMs);
      this.#waiters.add(waiter);
    });
  }

  /** Whether nobody holds a permit or waits for one. */
  idle(): boolean {
    return this.#free === this.#permits && this.#waiters.size === 0;
  }

  /** How long the oldest waiter has waited, in ms; 0 when nobody waits. */
  oldestWaitMs(): number {
    const oldest = this.#waiters.values().next();
    return oldest.done ? 0 : performance.now() - oldest.value.since;
  }

  /** A waiter's maxWaitMs has passed: it gives up, or waits as long again while the line is patient. */
  #expire(waiter: Waiter): void {
    if (this.patient()) waiter.timer = setTimeout(() => this.#expire(waiter), this.maxWaitMs);
    else this.#giveUp(waiter);
  }

  #giveUp(waiter: Waiter): void {
    this.#waiters.delete(waiter);
    clearTimeout(waiter.timer);
    waiter.refuse(new DatabaseBusyError(performance.now() - waiter.since));
  }

  /**
   * How long a caller that joined the line now would wait at the line's recent pace: each caller
   * ahead of it, and then it, waits for a permit's average hold, spread over the permits. 0 while
   * a permit is free.
   */
  expectedWaitMs(): number {
    if (this.#free > 0 && this.#waiters.size === 0) return 0;
    return ((this.#waiters.size + 1) * this.#holdMs) / this.#permits;
  }

  #releaser(): () => void {
    const since = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holdMs += HOLD_WEIGHT * (performance.now() - since - this.#holdMs);
      let next = this.#waiters.values().next();
      // A waiter whose time ran out while its timer waited for a busy loop gives up all the same:
      // started now, it would end later still.
      while (!next.done && performance.now() - next.value.since >= this.maxWaitMs && !this.patient()) {
        this.#giveUp(next.value);
        next = this.#waiters.values().next();
      }
      if (next.done) {
        this.#free++;
        return;
      }
      this.#waiters.delete(next.value);
      clearTimeout(next.value.timer);
      // SQLite's work is synchronous: a line of transactions each granted from the other's
      // release would run back to back in one microtask drain and hold the event loop for all of
      // them (seconds under load), while new requests, /healthz and the shedding that should
      // answer them 503 wait unread. There the next holder starts on the loop's next turn.
      const { grant } = next.value;
      if (this.nextTurn) setImmediate(() => grant(this.#releaser()));
      else grant(this.#releaser());
    };
  }
}
