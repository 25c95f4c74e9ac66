import { isoTime } from '../clock.js';
import type { DB, LotKind } from '../db/tables.js';
import { creditsToNumber } from '../ledger/balances.js';
import { fifoLots, NEVER, type FifoCursor } from '../ledger/lots-repository.js';

// What a customer's unexpired lots will lose at each of the next few expiry instants, read off
// the lots' FIFO index a page at a time, points and credits in one query. A kind's reading ends
// once its page shows an instant past the last one wanted (every lot of the earlier instants has
// been read by then), so the cost is that of the lots that expire soonest, whatever the
// customer's history.

export interface UpcomingExpiry {
  expires_at: string;
  points: number;
  credits: number;
}

const PAGE = 64;

/** Up to `count` expiry instants after `now`, soonest first, with the points and credits that expire then. */
export async function upcomingExpiries(db: DB, shopId: number, remoteId: number, now: number, count = 5): Promise<UpcomingExpiry[]> {
  const sums: Record<LotKind, Map<number, number>> = { points: new Map(), credits: new Map() };
  // A cursor starts after (now, NEVER): lots that expired by now are skipped.
  let cursors: FifoCursor[] = (['points', 'credits'] as const).map((kind) => ({ remoteId, kind, afterKey: now, afterId: NEVER }));
  while (cursors.length > 0) {
    const lots = await fifoLots(db, shopId, cursors, PAGE);
    const next: FifoCursor[] = [];
    for (const cursor of cursors) {
      const mine = lots.filter((lot) => lot.kind === cursor.kind);
      const found = sums[cursor.kind];
      let done = mine.length < PAGE;
      for (const lot of mine) {
        if (lot.key === NEVER || (!found.has(lot.key) && found.size === count)) {
          done = true;
          break;
        }
        found.set(lot.key, (found.get(lot.key) ?? 0) + lot.remaining);
      }
      const last = mine[mine.length - 1];
      if (!done && last !== undefined) next.push({ ...cursor, afterKey: last.key, afterId: last.id });
    }
    cursors = next;
  }
  const instants = [...new Set([...sums.points.keys(), ...sums.credits.keys()])].sort((a, b) => a - b).slice(0, count);
  return instants.map((at) => ({ expires_at: isoTime(at), points: sums.points.get(at) ?? 0, credits: creditsToNumber(sums.credits.get(at) ?? 0) }));
}
