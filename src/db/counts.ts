import { prepareQuery } from './prepared.js';
import type { DB } from './tables.js';

// Each shop's rows of every listed table, kept by triggers with every insert and delete
// (migration 008): an unfiltered list's total is one row away, whatever its size.

const storedCount = prepareQuery<{ shopId: number; table: string }, { n: number }>((db, p) =>
  db.selectFrom('shop_counts').select('n').where('shop_id', '=', p.value('shopId')).where('table_name', '=', p.value('table')),
);

/** How many rows the shop has in `table` (one of the listed tables). */
export async function shopRowCount(db: DB, shopId: number, table: string): Promise<number> {
  const [row] = await storedCount(db, { shopId, table });
  return row === undefined ? 0 : Number(row.n);
}
