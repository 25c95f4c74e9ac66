import { sql } from 'kysely';
import { isoTime } from '../clock.js';
import { prepareQuery } from '../db/prepared.js';
import type { DB, LotKind } from '../db/tables.js';
import { creditsToNumber } from '../ledger/balances.js';
import { NEVER } from '../ledger/lots-repository.js';

// What a customer's unexpired lots will lose at each of the next few expiry instants, read off
// the lots' FIFO index (points_lots_fifo, ledger/lots-repository.ts) a page at a time, points and
// credits in one statement. A kind's reading ends once its page shows an instant past the last
// one wanted (every lot of the earlier instants has been read by then), so the cost is that of
// the lots that expire soonest, whatever the customer's history.

export interface UpcomingExpiry {
  expires_at: string;
  points: number;
  credits: number;
}

const PAGE = 64;
/**
 * The first page of each kind: enough for five instants of a lot or so and a sixth that ends the
 * reading, which is most customers. SQLite spends about 0.6 µs per lot read, so a first page of
 * 64 cost a customer with 20 lots expiring one a day 20 µs where 8 cost 10 (bench storefront).
 */
const FIRST_PAGE = 8;

interface LotRow {
  kind: LotKind;
  id: number;
  remaining: number;
  lot_key: number;
}

type After = { key: number; id: number } | null;

/**
 * The next `limit` lots of each kind after its cursor (null: that kind is not read), expiring
 * lots only. The key and the open-lot condition are written as the index has them.
 */
const nextLots = prepareQuery<{ shopId: number; remoteId: number; pointsKey: number; pointsId: number; creditsKey: number; creditsId: number }, LotRow, number>(
  (db, p, limit) => {
    const page = (
      kind: LotKind,
      key: number,
      id: number,
    ) => sql`select * from (select kind, id, remaining, coalesce(expires_at, 9007199254740991) as lot_key from points_lots
    where shop_id = ${p.value('shopId')} and customer_remote_id = ${p.value('remoteId')} and kind = ${kind} and remaining > 0
      and coalesce(expires_at, 9007199254740991) >= ${key} and (coalesce(expires_at, 9007199254740991) > ${key} or id > ${id})
      and coalesce(expires_at, 9007199254740991) < ${NEVER}
    order by coalesce(expires_at, 9007199254740991), id limit ${sql.lit(limit)}) ${sql.raw(`${kind}_page`)}`;
    const both = sql<LotRow>`(${page('points', p.value('pointsKey'), p.value('pointsId'))} union all ${page('credits', p.value('creditsKey'), p.value('creditsId'))})`;
    return db.selectFrom(both.as('lots')).selectAll();
  },
);

/** Up to `count` expiry instants after `now`, soonest first, with the points and credits that expire then. */
export async function upcomingExpiries(db: DB, shopId: number, remoteId: number, now: number, count = 5): Promise<UpcomingExpiry[]> {
  const sums: Record<LotKind, Map<number, number>> = { points: new Map(), credits: new Map() };
  // A cursor starts after (now, NEVER): lots that expired by now are skipped. A kind read to its
  // end gets a cursor past every lot.
  const past: After = { key: NEVER, id: NEVER };
  let after: Record<LotKind, After> = { points: { key: now, id: NEVER }, credits: { key: now, id: NEVER } };
  let page = FIRST_PAGE;
  while (after.points !== null || after.credits !== null) {
    const cursor = (kind: LotKind) => after[kind] ?? past;
    const values = {
      shopId,
      remoteId,
      pointsKey: cursor('points').key,
      pointsId: cursor('points').id,
      creditsKey: cursor('credits').key,
      creditsId: cursor('credits').id,
    };
    const rows = await nextLots(db, values, page);
    const next: Record<LotKind, After> = { points: null, credits: null };
    for (const kind of ['points', 'credits'] as const) {
      if (after[kind] === null) continue;
      const mine = rows.filter((row) => row.kind === kind);
      const found = sums[kind];
      let done = mine.length < page;
      for (const lot of mine) {
        const key = Number(lot.lot_key);
        if (!found.has(key) && found.size === count) {
          done = true;
          break;
        }
        found.set(key, (found.get(key) ?? 0) + Number(lot.remaining));
      }
      const last = mine[mine.length - 1];
      if (!done && last !== undefined) next[kind] = { key: Number(last.lot_key), id: Number(last.id) };
    }
    after = next;
    page = PAGE;
  }
  const instants = [...new Set([...sums.points.keys(), ...sums.credits.keys()])].sort((a, b) => a - b).slice(0, count);
  return instants.map((at) => ({ expires_at: isoTime(at), points: sums.points.get(at) ?? 0, credits: creditsToNumber(sums.credits.get(at) ?? 0) }));
}
