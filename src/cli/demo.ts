import type { Command } from 'commander';
import { buildApp } from '../app.js';
import { transaction } from '../db/dialect.js';
import { API_PREFIX } from '../http/openapi.js';
import { insertRecords, upsertRecords } from '../records/repository.js';
import { columnsOf, type Row } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';
import { orders } from '../records/resources/orders.js';
import { rewards } from '../records/resources/rewards.js';
import { vipTiers } from '../records/resources/vip-tiers.js';
import { createToken, getShop, revokeToken } from '../shops/repository.js';
import { CliError, output, parseId, withDatabase } from './context.js';

// `loyalty demo`: a shop full of plausible data to try the API on. Records go in through the
// repositories; points events go through the real API (POST /points_events/batch), so the
// ledger's rules and balances hold exactly as they would for a merchant.

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Linus', 'Frances', 'John', 'Katherine', 'Dennis', 'Hedy'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Perlman', 'Torvalds', 'Allen', 'Backus', 'Johnson', 'Ritchie', 'Lamarr'];
const STATUSES = ['paid', 'paid', 'paid', 'paid', 'partially_refunded', 'refunded', 'pending'];
const REWARDS = [
  { name: '5 € off your next order', points_price: 500, kind: 'fixed_amount_discount', value: 5 },
  { name: '10% off your next order', points_price: 800, kind: 'percentage_discount', value: 10 },
  { name: 'Free shipping', points_price: 300, kind: 'free_shipping', value: 0 },
  { name: 'Free tote bag', points_price: 1500, kind: 'free_product', value: 12 },
];
const TIERS = [
  { name: 'Bronze', points_threshold: 0 },
  { name: 'Silver', points_threshold: 1000 },
  { name: 'Gold', points_threshold: 5000 },
];
const DAY = 86_400_000;

/** A small deterministic generator, so that two demos of the same size look alike. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('Seed a shop with sample customers, orders, rewards, VIP tiers and points events')
    .requiredOption('--shop <id>', 'the shop to fill')
    .option('--customers <n>', 'how many customers', '100')
    .option('--json', 'print what was created as JSON')
    .action(async (options: { shop: string; customers: string; json?: boolean }) => {
      const shopId = parseId(options.shop, '--shop');
      const count = parseId(options.customers, '--customers');
      await withDatabase(async (database, config) => {
        if ((await getShop(database.db, shopId)) === undefined) throw new CliError(`no shop with id ${shopId}`);
        const db = database.db;
        const now = Date.now();
        const rand = random(count);
        const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;

        const people: Row[] = [];
        const sales: Row[] = [];
        for (let i = 1; i <= count; i++) {
          const first = pick(FIRST);
          const last = pick(LAST);
          const body = { email: `${first}.${last}.${i}@example.com`.toLowerCase(), first_name: first, last_name: last, phone: null, birthday: `19${60 + Math.floor(rand() * 40)}-0${1 + Math.floor(rand() * 9)}-1${Math.floor(rand() * 9)}` };
          people.push({ remote_id: i, ...columnsOf(customers, body, 'replace', now) });
          for (let k = Math.floor(rand() * 4); k > 0; k--) {
            const order = {
              customer_remote_id: i,
              total: Math.round(1000 + rand() * 15_000) / 100,
              currency: 'EUR',
              financial_status: pick(STATUSES),
              placed_at: new Date(now - Math.floor(rand() * 365 * DAY)).toISOString(),
            };
            sales.push({ remote_id: 100_000 + sales.length + 1, ...columnsOf(orders, order, 'replace', now) });
          }
        }
        await transaction(db, async (trx) => {
          await upsertRecords(trx, shopId, customers, people, now);
          await upsertRecords(trx, shopId, orders, sales, now);
          await insertRecords(trx, shopId, rewards, REWARDS.map((r) => columnsOf(rewards, r, 'create', now)), now);
          await insertRecords(trx, shopId, vipTiers, TIERS.map((t) => columnsOf(vipTiers, t, 'create', now)), now);
        });

        // Points: a signup bonus, a point per euro of each paid order, and some redemptions.
        const events: Row[] = people.map((p) => ({ customer_identifier: String(p.remote_id), source: 'signup', points_amount: 100, external_note: 'Welcome bonus' }));
        for (const sale of sales) {
          if (sale.financial_status !== 'paid') continue;
          events.push({ customer_identifier: String(sale.customer_remote_id), source: 'order', points_amount: Math.floor(Number(sale.total) / 100), internal_note: `Order ${sale.remote_id}` });
        }
        for (const p of people) if (rand() < 0.2) events.push({ customer_identifier: String(p.remote_id), source: 'manual', points_amount: -50, internal_note: 'Redeemed: free shipping' });

        const app = await buildApp({ ...config, logLevel: 'warn' }, { database });
        const { token, row } = await createToken(db, shopId, 'demo (revoked when done)', now);
        let created = 0;
        try {
          for (let i = 0; i < events.length; i += config.batchMaxEvents) {
            const res = await app.inject({
              method: 'POST',
              url: `${API_PREFIX}/points_events/batch`,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              payload: JSON.stringify({ points_events: events.slice(i, i + config.batchMaxEvents) }),
            });
            if (res.statusCode !== 201) throw new CliError(`creating points events failed with ${res.statusCode}: ${res.body.slice(0, 500)}`);
            created += (res.json() as { data: unknown[] }).data.length;
          }
        } finally {
          await revokeToken(db, shopId, row.id, Date.now());
          await app.close();
        }
        const summary = { customers: people.length, orders: sales.length, rewards: REWARDS.length, vip_tiers: TIERS.length, points_events: created };
        output(options.json ?? false, summary, () => `Seeded shop ${shopId}: ${Object.entries(summary).map(([k, v]) => `${v} ${k.replace('_', ' ')}`).join(', ')}.`);
      });
    });
}
