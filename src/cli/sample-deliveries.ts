import { randomBytes, randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { serverUrl, type Config } from '../config.js';
import { ingest, type DeliveryStatus } from '../connections/ingest.js';
import { signatureOf } from '../connections/signature.js';
import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import { AuthFailures } from '../http/auth-failures.js';
import { connections, ingestUrl } from '../records/resources/connections.js';
import { checkedBody, createRecord } from '../records/write.js';
import { getShop, type Shop } from '../shops/repository.js';
import { writeCliAuditEntry } from '../shops/audit.js';
import { CliError, output, parseId, table, withDatabase } from './context.js';

// `loyalty connections demo --shop N`: a Shopify connection and a few signed sample deliveries
// sent to it through the very code that receives a store's (connections/ingest.ts), so that a
// new user sees the delivery log fill without a store (docs/connections.md).

const at = (ms: number) => new Date(ms - 5 * 3_600_000).toISOString().replace(/\.\d{3}Z$/, '-05:00');
const money = (cents: number) => (cents / 100).toFixed(2);

function sampleOrder(id: number, customerId: number, subtotal: number, updatedAt: number, status = 'paid') {
  return {
    id,
    currency: 'EUR',
    financial_status: status,
    subtotal_price: money(subtotal),
    total_price: money(Math.round(subtotal * 1.2) + 495),
    current_subtotal_price: money(subtotal),
    cancelled_at: null,
    test: false,
    processed_at: at(updatedAt - 60_000),
    created_at: at(updatedAt - 60_000),
    updated_at: at(updatedAt),
    discount_codes: [],
    customer: { id: customerId, email: `sample.${customerId}@example.com`, first_name: 'Sample', last_name: 'Shopper', updated_at: at(updatedAt - 86_400_000) },
    line_items: [{ id: id * 10, title: 'Organic cotton tee', price: money(subtotal), quantity: 1, sku: 'TEE-1' }],
  };
}

/** The sample deliveries: [topic, body, event id], in the order sent. */
function samples(now: number): [string, unknown, string][] {
  const order = 990_000_000_000 + Math.floor(Math.random() * 1e9);
  const customer = 880_000_000_000 + Math.floor(Math.random() * 1e9);
  const paid = randomUUID();
  return [
    ['orders/paid', sampleOrder(order, customer, 5990, now), paid],
    // The platform retries: the same event again writes nothing.
    ['orders/paid', sampleOrder(order, customer, 5990, now), paid],
    // An older update, arriving late: stale.
    ['orders/updated', sampleOrder(order, customer, 5990, now - 30_000, 'pending'), randomUUID()],
    // A refund before its order (deferred), then the order.
    ['refunds/create', { id: order + 7, order_id: order + 1, refund_line_items: [{ subtotal: '10.00' }], transactions: [] }, randomUUID()],
    ['orders/paid', sampleOrder(order + 1, customer, 3000, now), randomUUID()],
    // A payload no store would fix by retrying: kept as failed, to look at and replay.
    ['orders/paid', { ...sampleOrder(order + 2, customer, 1000, now), currency: 'euro' }, randomUUID()],
    ['products/update', { id: 1, title: 'Organic cotton tee' }, randomUUID()],
  ];
}

/** A new Shopify connection named "Demo store", with a secret of its own. */
async function demoConnection(db: DB, config: Config, shop: Shop, now: number): Promise<{ id: number; secret: string }> {
  const secret = randomBytes(24).toString('base64url');
  const body = { platform: 'shopify', name: 'Demo store', shop_domain: 'demo-store.myshopify.com', secret };
  const record = await transaction(db, async (trx) => {
    const created = await createRecord(trx, { shopId: shop.id, now, config }, connections, checkedBody(connections, body, [], true));
    await writeCliAuditEntry(trx, shop.id, now, { action: 'connection.created', resourceId: String(created.id), changes: { name: [null, 'Demo store'] } });
    return created;
  });
  return { id: Number(record.id), secret };
}

export async function sendSampleDeliveries(db: DB, config: Config, shop: Shop, now: number) {
  const connection = await demoConnection(db, config, shop, now);
  const deps = { db, clock: () => now, config, failures: new AuthFailures(config.authFailures.max, config.authFailures.windowMs) };
  const sent: { topic: string; status: DeliveryStatus }[] = [];
  for (const [topic, payload, eventId] of samples(now)) {
    const raw = Buffer.from(JSON.stringify(payload));
    const headers = { 'x-shopify-topic': topic, 'x-shopify-event-id': eventId, 'x-shopify-hmac-sha256': signatureOf(connection.secret, raw) };
    sent.push({ topic, status: await ingest(deps, { platform: 'shopify', id: connection.id, headers, raw, ip: 'cli' }) });
  }
  return { connection_id: connection.id, ingest_url: ingestUrl(serverUrl(config), 'shopify', connection.id), deliveries: sent };
}

export function registerConnectionsCommand(program: Command): void {
  const command = program.command('connections').description('Store connections (docs/connections.md)');
  command
    .command('demo')
    .description('Create a Shopify connection "Demo store" and send it a few signed sample deliveries, so that its delivery log fills without a store')
    .requiredOption('--shop <id>', 'the shop')
    .option('--json', 'print what was sent as JSON')
    .action(async (options: { shop: string; json?: boolean }) => {
      const shopId = parseId(options.shop, '--shop');
      await withDatabase(async (database, config) => {
        const shop = await getShop(database.db, shopId);
        if (shop === undefined) throw new CliError(`no shop with id ${shopId}`);
        const result = await sendSampleDeliveries(database.db, config, shop, Date.now());
        output(
          options.json ?? false,
          result,
          () =>
            `Connection ${result.connection_id} (ingest URL ${result.ingest_url}) received:\n${table(result.deliveries, ['topic', 'status'])}\n` +
            `See them with GET /merchant_api/v1/connections/${result.connection_id}/deliveries,.`,
        );
      });
    });
}
