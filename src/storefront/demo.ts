import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import { seedDemo } from '../cli/demo.js';
import { createKey, newestKey } from './keys.js';

// The demo shop that `npm start` creates on an empty database gets the demo's programme and
// customers, and a storefront key, so that GET /storefront/demo shows the panel at once.

const DEMO_CUSTOMERS = 8;

export async function makeDemoStorefront(db: DB, config: Config, shopId: number, now: number): Promise<void> {
  await seedDemo(db, config, shopId, DEMO_CUSTOMERS, now);
  await createKey(db, shopId, [], now);
  await db.updateTable('shops').set({ demo: 1 }).where('id', '=', shopId).execute();
}

/** The demo shop's key and the customer the demo page shows (the one with most points); undefined once the shop is gone. */
export async function demoStorefront(db: DB): Promise<{ key: { publishable_key: string; secret: string }; remoteId: number } | undefined> {
  const shop = await db.selectFrom('shops').select('id').where('demo', '=', 1).orderBy('id').limit(1).executeTakeFirst();
  if (shop === undefined) return undefined;
  const shopId = Number(shop.id);
  const [key, customer] = await Promise.all([
    newestKey(db, shopId),
    db
      .selectFrom('customers')
      .select('remote_id')
      .where('shop_id', '=', shopId)
      .where('remote_id', '>', 0)
      .orderBy('points_balance', 'desc')
      .orderBy('remote_id')
      .limit(1)
      .executeTakeFirst(),
  ]);
  if (key === undefined || customer === undefined) return undefined;
  return { key, remoteId: Number(customer.remote_id) };
}
