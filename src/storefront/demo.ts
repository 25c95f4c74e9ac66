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

export interface DemoStorefront {
  shopName: string;
  key: { publishable_key: string; secret: string };
  remoteId: number;
  firstName: string | null;
}

/**
 * The demo shop's key and the customer the demo page shows: `remoteId` while it is one of the
 * shop's customers (the browser keeps it in a cookie, so a reload shows the same shopper), else
 * the one with most points. Undefined once the shop is gone.
 */
export async function demoStorefront(db: DB, remoteId?: number): Promise<DemoStorefront | undefined> {
  const shop = await db.selectFrom('shops').select(['id', 'name']).where('demo', '=', 1).orderBy('id').limit(1).executeTakeFirst();
  if (shop === undefined) return undefined;
  const shopId = Number(shop.id);
  const customers = db.selectFrom('customers').select(['remote_id', 'first_name']).where('shop_id', '=', shopId).where('remote_id', '>', 0);
  const [key, kept] = await Promise.all([
    newestKey(db, shopId),
    remoteId === undefined ? undefined : customers.where('remote_id', '=', remoteId).executeTakeFirst(),
  ]);
  const customer = kept ?? (await customers.orderBy('points_balance', 'desc').orderBy('remote_id').limit(1).executeTakeFirst());
  if (key === undefined || customer === undefined) return undefined;
  return { shopName: shop.name, key, remoteId: Number(customer.remote_id), firstName: customer.first_name };
}
