import { randomUUID } from 'node:crypto';
import { connect } from '../src/db/connect.js';
import { shopifyCustomer, shopifyHeaders, shopifyOrder } from '../test/connections/payloads.js';
import type { Benchmark } from './lib/benchmark.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { startServer } from './lib/server.js';

// `npm run bench -- connections [orders]`: Shopify orders/paid deliveries over HTTP (signed,
// distinct events, realistic 5-15 KB bodies) beside the same orders sent as PUT /orders, in the
// same run, on the same server (SQLite). Targets: deliveries per second at least 0.7 of the
// PUTs' (the HMAC and the delivery record are the only extra work), and a replayed duplicate
// (the same event id again) at least 3x cheaper than an applied delivery.

const CUSTOMERS = 500;
const CONCURRENCY = 8;
const SECRET = 'shpss_bench_secret_0123456789abcdef';

interface Sent {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends every request, CONCURRENCY at a time; requests per second. */
async function drive(url: string, requests: readonly Sent[], expected: (status: number, text: string) => boolean): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests.length) {
      const r = requests[next++]!;
      const res = await fetch(`${url}${r.path}`, { method: r.path.startsWith('/ingest') ? 'POST' : 'PUT', headers: r.headers, body: r.body });
      const text = await res.text();
      if (!expected(res.status, text)) throw new Error(`${r.path} answered ${res.status}: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return requests.length / ((performance.now() - started) / 1000);
}

const customerOf = (i: number) => ({ id: (i % CUSTOMERS) + 1, email: `customer${(i % CUSTOMERS) + 1}@example.com`, updatedAt: Date.UTC(2026, 0, 1) });

async function prepare(url: string, token: string) {
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}/merchant_api/v1/${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: { id: number } }).data;
  };
  await post('earning_rules', { kind: 'order', points_per_unit: 1, unit_amount: 1 });
  const connection = await post('connections', { platform: 'shopify', name: 'Bench store', shop_domain: 'bench.myshopify.com', secret: SECRET });
  // The store's customers, as customers/create sent them: an order's copy of its customer then writes nothing again.
  const customers: Sent[] = Array.from({ length: CUSTOMERS }, (_, i) => {
    const body = JSON.stringify(shopifyCustomer(customerOf(i)));
    return { path: `/ingest/v1/shopify/${connection.id}`, headers: shopifyHeaders('customers/create', body, SECRET), body };
  });
  await drive(url, customers, (status) => status === 200);
  return { auth, connectionId: Number(connection.id) };
}

export const connections: Benchmark = {
  description:
    'Shopify orders/paid deliveries over HTTP beside the same orders as PUT /orders (ratio >= 0.7), and a duplicate vs an applied one (>= 3x cheaper)',
  async run(args) {
    const count = Number(args[0] ?? 3000);
    const scratch = await scratchDatabase('sqlite', 'connections');
    const database = connect(scratch.url);
    const { token } = await benchShop(database, CUSTOMERS, Date.now());
    await database.close();
    const server = await startServer(scratch.url, { LOG_LEVEL: 'warn', MAX_EVENT_LOOP_DELAY_MS: '0' });
    try {
      const { auth, connectionId } = await prepare(server.url, token);
      const orders = Array.from({ length: 2 * count }, (_, i) =>
        shopifyOrder({ id: 1_000_000 + i, customer: customerOf(i), subtotal: 1000 + (i % 50) * 137, updatedAt: Date.UTC(2026, 1, 1) + i, lines: 6 + (i % 11) }),
      );
      const sizes = orders.map((o) => JSON.stringify(o).length);
      const deliveries: Sent[] = orders.slice(0, count).map((o) => {
        const body = JSON.stringify(o);
        return { path: `/ingest/v1/shopify/${connectionId}`, headers: shopifyHeaders('orders/paid', body, SECRET, randomUUID()), body };
      });
      // The same orders as the mapping writes them, under other ids, as PUT /orders.
      const puts: Sent[] = orders.slice(count).map((o) => ({
        path: `/merchant_api/v1/orders/${o.id}`,
        headers: auth,
        body: JSON.stringify({
          customer_remote_id: (o.customer as { id: number }).id,
          total: Number(o.subtotal_price),
          currency: 'EUR',
          financial_status: 'paid',
          total_refunded: 0,
          discount_codes: [],
          placed_at: new Date(String(o.processed_at)).toISOString(),
        }),
      }));
      // Warm both paths, then measure each, PUTs first and last so that a drifting machine shows.
      await drive(server.url, puts.slice(0, 200), (s) => s === 201);
      await drive(server.url, deliveries.slice(0, 200), (s, t) => s === 200 && t.includes('applied'));
      const half = Math.floor((count - 200) / 2);
      const putA = await drive(server.url, puts.slice(200, 200 + half), (s) => s === 201);
      const applied = await drive(server.url, deliveries.slice(200), (s, t) => s === 200 && t.includes('applied'));
      const putB = await drive(server.url, puts.slice(200 + half), (s) => s === 201);
      const duplicates = await drive(server.url, deliveries.slice(200), (s, t) => s === 200 && t.includes('duplicate'));
      const put = (putA + putB) / 2;
      const report = {
        body_bytes: { min: Math.min(...sizes), max: Math.max(...sizes) },
        put_orders_per_second: Math.round(put),
        deliveries_per_second: Math.round(applied),
        ratio: Math.round((applied / put) * 100) / 100,
        target_ratio: 0.7,
        duplicates_per_second: Math.round(duplicates),
        duplicate_cheaper_by: Math.round((duplicates / applied) * 10) / 10,
        target_cheaper_by: 3,
      };
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } finally {
      await server.stop();
      await scratch.drop();
    }
  },
};
