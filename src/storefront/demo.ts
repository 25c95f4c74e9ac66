import type { Config } from '../config.js';
import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { seedDemo } from '../cli/demo.js';
import { changesOf } from '../http/audit.js';
import { writeAuditEntry } from '../shops/audit.js';
import { createKey, newestKey } from './keys.js';

// The demo shop that `npm start` creates on an empty database gets the demo's programme and
// customers, and a storefront key, so that GET /storefront/demo shows the panel at once.

const DEMO_CUSTOMERS = 8;

export async function makeDemoStorefront(db: DB, config: Config, shopId: number, now: number): Promise<void> {
  await seedDemo(db, config, shopId, DEMO_CUSTOMERS, now);
  // The server's write, in the audit log as the bootstrap's token and the demo's data are
  // (docs/access.md), in the key's own transaction; the entry shows the key as POST
  // /storefront_keys's does, its secret redacted.
  await transaction(db, async (trx) => {
    const key = await createKey(trx, shopId, [], now);
    await writeAuditEntry(trx, {
      shopId,
      occurredAt: now,
      actor: { type: 'system' },
      action: 'storefront_key.created',
      resource: 'storefront_key',
      resourceId: String(key.id),
      changes: changesOf(null, { ...key }),
      requestId: null,
    });
  });
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
