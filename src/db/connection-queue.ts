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

interface Waiter {
  since: number;
  grant(release: () => void): void;
  timer: NodeJS.Timeout | undefined;
}

export class ConnectionQueue {
  #free: number;
  // Insertion order is arrival order; a waiter that times out leaves from wherever it is.
  readonly #waiters = new Set<Waiter>();

  constructor(
    permits: number,
    /** Infinity: wait as long as it takes (the CLI). */
    readonly maxWaitMs: number = Infinity,
  ) {
    this.#free = permits;
  }

  /** Resolves with the function that gives the connection back, once one is free. */
  acquire(): Promise<() => void> {
    if (this.#free > 0 && this.#waiters.size === 0) {
      this.#free--;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { since: performance.now(), grant: resolve, timer: undefined };
      if (Number.isFinite(this.maxWaitMs)) {
        waiter.timer = setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new DatabaseBusyError(performance.now() - waiter.since));
        }, this.maxWaitMs);
      }
      this.#waiters.add(waiter);
    });
  }

  /** How long the oldest waiter has waited, in ms; 0 when nobody waits. */
  oldestWaitMs(): number {
    const oldest = this.#waiters.values().next();
    return oldest.done ? 0 : performance.now() - oldest.value.since;
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.values().next();
      if (next.done) {
        this.#free++;
        return;
      }
      this.#waiters.delete(next.value);
      clearTimeout(next.value.timer);
      next.value.grant(this.#releaser());
    };
  }
}
