import type { Command } from 'commander';
import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import { transaction } from '../db/dialect.js';
import { shopRowCount } from '../db/counts.js';
import { existingRecords } from '../records/repository.js';
import { customers } from '../records/resources/customers.js';
import { getShop } from '../shops/repository.js';
import { writeAuditEntry, type Actor, type Changes } from '../shops/audit.js';
import { CliError, output, parseId, withDatabase } from './context.js';
import { addProgramme, writeHistory } from './demo-history.js';
import { dayTime, demoPlan } from './demo-plan.js';

// `loyalty demo`: a shop full of plausible data to try the API and the console on: 90 days of
// history (demo-plan.ts decides it, demo-history.ts writes it) through the same services the
// API writes with: records through records/write.ts (checked, announced to the shop's webhooks,
// earning by the shop's rules as PUT does), redemptions through redemptions/service.ts, so the
// ledger's rules and balances hold exactly as they would for a merchant. The whole is one entry
// of the shop's audit log, by whoever ran it.

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
 * Fills a shop with the demo's programme, customers (remote_id 1…count) and their 90 days of
 * orders, redemptions, bonus and expiries; what was there already is left alone (customers
 * already there keep their data and points: a second run credits no one twice).
 */
export async function seedDemo(db: DB, config: Config, shopId: number, count: number, now: number, actor: Actor = { type: 'system' }): Promise<DemoSummary> {
  const plan = demoPlan(count);
  const existing = await existingRecords(
    db,
    shopId,
    customers,
    plan.map((p) => p.remoteId),
  );
  const people = plan.filter((p) => !existing.has(p.remoteId));
  const eventsBefore = await shopRowCount(db, shopId, 'points_events');
  // The programme first, dated when the history starts, so that customers and orders earn by it as they would by PUT.
  const programme = await transaction(db, (trx) => addProgramme(trx, { shopId, now: dayTime(now, 0, -60), config }));
  const history = await writeHistory(db, config, shopId, people, now);
  const summary: DemoSummary = {
    customers: people.length,
    orders: history.orders,
    ...programme,
    redemptions: history.redemptions,
    points_events: (await shopRowCount(db, shopId, 'points_events')) - eventsBefore,
  };
  if (Object.values(summary).some((n) => n > 0)) {
    const changes = Object.fromEntries(Object.entries(summary).map(([name, n]) => [name, [null, n]])) as Changes;
    await writeAuditEntry(db, {
      shopId,
      occurredAt: now,
      actor,
      action: 'shop.demo_data_added',
      resource: 'shop',
      resourceId: String(shopId),
      changes,
      requestId: null,
    });
  }
  return summary;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Seed a shop with earning rules (a signup bonus, a point per unit of currency, unless the shop has its own), rewards, VIP tiers, and sample customers ' +
        'with 90 days of history: orders (paid, refunded, pending) that earn by the rules, redemptions, a spring bonus that partly expires, tiers reached. Re-running it is harmless: customers already there (by remote_id 1…N) ' +
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
        const summary = await seedDemo(database.db, config, shopId, count, Date.now(), { type: 'cli' });
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
