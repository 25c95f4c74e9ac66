import type { DB } from './tables.js';

/**
 * What a transaction reads once and then keeps (the shop's settings, its webhooks), by key: a
 * transaction sees what it wrote, so whoever writes such a value in it sets it here too (`set`).
 * Outside a transaction nothing is kept: every call reads afresh.
 */
export class PerTransaction<K, V> {
  private readonly memo = new WeakMap<DB, Map<K, Promise<V>>>();

  constructor(private readonly load: (db: DB, key: K) => Promise<V>) {}

  get(db: DB, key: K): Promise<V> {
    if (!db.isTransaction) return this.load(db, key);
    const byKey = this.of(db);
    let value = byKey.get(key);
    if (value === undefined) {
      byKey.set(key, (value = this.load(db, key)));
      // A read that failed is not kept: the transaction fails with it, or reads again.
      value.catch(() => byKey.delete(key));
    }
    return value;
  }

  /** The value `db` has just written; nothing is kept outside a transaction. */
  set(db: DB, key: K, value: V): void {
    if (db.isTransaction) this.of(db).set(key, Promise.resolve(value));
  }

  private of(db: DB): Map<K, Promise<V>> {
    let byKey = this.memo.get(db);
    if (byKey === undefined) this.memo.set(db, (byKey = new Map()));
    return byKey;
  }
}
