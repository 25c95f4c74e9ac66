import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import { transaction } from '../db/dialect.js';
import { shopRowCount } from '../db/counts.js';
import { AppError } from '../errors.js';
import { existingRecords, selectRecords } from '../records/repository.js';
import { columnsOf, type Row } from '../records/resource.js';
import { customers } from '../records/resources/customers.js';
import { earningRules } from '../records/resources/earning-rules.js';
import { orders } from '../records/resources/orders.js';
import { rewards } from '../records/resources/rewards.js';
import { vipTiers } from '../records/resources/vip-tiers.js';
import { redeem } from '../redemptions/service.js';
import { createMany, upsertMany, type Writer } from '../records/write.js';
import { getShop } from '../shops/repository.js';
import { CliError, output, parseId, withDatabase } from './context.js';
import { DAY_MS } from '../clock.js';

// `loyalty demo`: a shop full of plausible data to try the API on. It writes as the API does,
// through the same services: records through records/write.ts (checked, announced to the
// shop's webhooks, and earning by the shop's rules as PUT does), redemptions through
// redemptions/service.ts, so the ledger's rules and balances hold exactly as they would for a
// merchant.

const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Radia', 'Linus', 'Frances', 'John', 'Katherine', 'Dennis', 'Hedy'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Perlman',
  'Torvalds',
  'Allen',
  'Backus',
  'Johnson',
  'Ritchie',
  'Lamarr',
];
const STATUSES = ['paid', 'paid', 'paid', 'paid', 'partially_refunded', 'refunded', 'pending'];
const REWARDS = [
  { name: '5 € off your next order', points_price: 500, kind: 'fixed_amount_discount', value: 5 },
  { name: '10% off your next order', points_price: 800, kind: 'percentage_discount', value: 10 },
  { name: 'Free shipping', points_price: 300, kind: 'free_shipping', value: 0 },
  { name: 'Free tote bag', points_price: 1500, kind: 'free_product', value: 12 },
];
const RULES = [
  { kind: 'signup', points_amount: 100 },
  { kind: 'order', points_per_unit: 1, unit_amount: 1, currency: 'EUR' },
];
const TIERS = [
  { name: 'Bronze', points_threshold: 0 },
  { name: 'Silver', points_threshold: 1000 },
  { name: 'Gold', points_threshold: 5000 },
];

/** A small deterministic generator, so that two demos of the same size look alike. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** The same seed every time: the first N customers of any demo are the same N, with the same orders. */
const SEED = 20_260_115;

export interface DemoSummary {
  customers: number;
  orders: number;
  earning_rules: number;
  rewards: number;
  vip_tiers: number;
  redemptions: number;
  points_events: number;
}

/**
 * Fills a shop with the demo's programme, customers (remote_id 1…count), orders and redemptions,
 * through the services the API writes with; what was there already is left alone.
 */
export async function seedDemo(db: DB, config: Config, shopId: number, count: number, now: number): Promise<DemoSummary> {
  const rand = random(SEED);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;

  const people: Row[] = [];
  const sales: Row[] = [];
  const redeeming = new Set<number>();
  for (let i = 1; i <= count; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const body = {
      email: `${first}.${last}.${i}@example.com`.toLowerCase(),
      first_name: first,
      last_name: last,
      phone: null,
      birthday: `19${60 + Math.floor(rand() * 40)}-0${1 + Math.floor(rand() * 9)}-1${Math.floor(rand() * 9)}`,
    };
    people.push({ remote_id: i, ...columnsOf(customers, body, 'replace', now) });
    for (let k = Math.floor(rand() * 4); k > 0; k--) {
      const order = {
        customer_remote_id: i,
        total: Math.round(1000 + rand() * 15_000) / 100,
        currency: 'EUR',
        financial_status: pick(STATUSES),
        total_refunded: 0,
        placed_at: new Date(now - Math.floor(rand() * 365 * DAY_MS)).toISOString(),
      };
      // A partial refund gives back 30% of the total; a refunded order all of it.
      if (order.financial_status !== 'paid' && order.financial_status !== 'pending')
        order.total_refunded = order.financial_status === 'refunded' ? order.total : Math.floor(order.total * 30) / 100;
      sales.push({ remote_id: 100_000 + sales.length + 1, ...columnsOf(orders, order, 'replace', now) });
    }
    if (rand() < 0.2) redeeming.add(i);
  }

  // Customers already there keep their data and points: a second run credits no one twice.
  const existing = await existingRecords(
    db,
    shopId,
    customers,
    people.map((p) => Number(p.remote_id)),
  );
  const newPeople = people.filter((p) => !existing.has(Number(p.remote_id)));
  const newSales = sales.filter((s) => !existing.has(Number(s.customer_remote_id)));

  const w: Writer = { shopId, now, config };
  const eventsBefore = await shopRowCount(db, shopId, 'points_events');
  const added = await transaction(db, async (trx) => {
    // The programme first, so that customers and orders earn by it as they would by PUT:
    // a signup bonus and a point per euro, unless the shop has its own rules of those kinds.
    const kinds = new Set((await selectRecords(trx, shopId, earningRules).where('enabled', '=', 1).execute()).map((row) => row.kind));
    const newRules = RULES.filter((r) => !kinds.has(r.kind)).map((r) => columnsOf(earningRules, r, 'create', now));
    await createMany(trx, w, earningRules, newRules);
    // Tiers before the customers, who reach them as they earn. A tier is added unless its
    // name or threshold is taken (both are unique in a shop).
    const taken = await createMany(
      trx,
      w,
      vipTiers,
      TIERS.map((t) => columnsOf(vipTiers, t, 'create', now)),
    );
    // As an import would: the shop's customer.created webhooks hear of the new customers.
    const upsert = async (r: typeof customers, rows: Row[]) => {
      const refused = await upsertMany(
        trx,
        w,
        r,
        rows.map(({ remote_id, ...values }) => ({ id: Number(remote_id), values })),
      );
      if (refused.size > 0) throw new Error(`the demo's own ${r.table} were refused: ${JSON.stringify([...refused.values()][0])}`);
    };
    await upsert(customers, newPeople);
    await upsert(orders, newSales);
    const names = new Set(
      (
        await selectRecords(trx, shopId, rewards)
          .where(
            'name',
            'in',
            REWARDS.map((r) => r.name),
          )
          .execute()
      ).map((row) => row.name),
    );
    const newRewards = REWARDS.filter((r) => !names.has(r.name)).map((r) => columnsOf(rewards, r, 'create', now));
    await createMany(trx, w, rewards, newRewards);
    return { earning_rules: newRules.length, rewards: newRewards.length, vip_tiers: TIERS.length - taken.size };
  });

  // Some new customers redeem free shipping, when they can afford it, as POST /redemptions would.
  const [shipping] = await selectRecords(db, shopId, rewards).where('name', '=', 'Free shipping').where('enabled', '=', 1).execute();
  let redeemed = 0;
  for (const p of newPeople) {
    if (shipping === undefined || !redeeming.has(Number(p.remote_id))) continue;
    redeemed += await transaction(db, async (trx) => {
      try {
        await redeem(trx, shopId, { rewardId: Number(shipping.id), customerIdentifier: String(p.remote_id) }, now);
        return 1;
      } catch (error) {
        if (error instanceof AppError && error.code === 'insufficient_balance') return 0;
        throw error;
      }
    });
  }
  const created = (await shopRowCount(db, shopId, 'points_events')) - eventsBefore;
  const summary: DemoSummary = {
    customers: newPeople.length,
    orders: newSales.length,
    earning_rules: added.earning_rules,
    rewards: added.rewards,
    vip_tiers: added.vip_tiers,
    redemptions: redeemed,
    points_events: created,
  };
  return summary;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Seed a shop with earning rules (a signup bonus, a point per unit of currency, unless the shop has its own), sample customers who earn by them, ' +
        'their orders (paid, refunded, pending), rewards, VIP tiers and redemptions. Re-running it is harmless: customers already there (by remote_id 1…N) ' +
        'are left alone, rules, rewards and tiers are added only when missing, so a larger --customers adds just the new customers, their orders and their points.',
    )
    .requiredOption('--shop <id>', 'the shop to fill')
    .option('--customers <n>', 'how many customers', '100')
    .option('--json', 'print what was added as JSON')
    .action(async (options: { shop: string; customers: string; json?: boolean }) => {
      const shopId = parseId(options.shop, '--shop');
      const count = parseId(options.customers, '--customers');
      await withDatabase(async (database, config) => {
        if ((await getShop(database.db, shopId)) === undefined) throw new CliError(`no shop with id ${shopId}`);
        const summary = await seedDemo(database.db, config, shopId, count, Date.now());
        output(options.json ?? false, summary, () =>
          Object.values(summary).every((n) => n === 0)
            ? `Shop ${shopId} already holds the demo data for ${count} customers: nothing to add.`
            : `Seeded shop ${shopId}: ${Object.entries(summary)
                .map(([k, v]) => `${v} ${k.replace('_', ' ')}`)
                .join(', ')}.`,
        );
      });
    });
}
