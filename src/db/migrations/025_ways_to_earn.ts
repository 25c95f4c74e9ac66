import { sql, type Kysely } from 'kysely';
import { shopTable } from './_schema.js';

// Ways to earn (docs/earning.md): earning rules of the kinds custom_action and visit_url, many
// per shop and one enabled per name, each with a limit per calendar period in the shop's time
// zone. A customer's count of grants by a rule in the current period is one row, upserted in
// the transaction of the grant, so a limit is checked without reading the customer's history
// and holds for racing requests (the row is the lock). An action's distinct_id is kept once per
// customer with the event it granted, so the same action sent again grants nothing.

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of ['name', 'description', 'url', 'limit_period']) {
    await db.schema.alterTable('earning_rules').addColumn(column, 'text').execute();
  }
  await db.schema.alterTable('earning_rules').addColumn('limit_count', 'integer').execute();
  await db.schema
    .alterTable('earning_rules')
    .addColumn('claimable', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // One enabled rule per kind for the kinds without a name; one enabled rule per name for the others.
  await db.schema.dropIndex('earning_rules_enabled_kind').execute();
  await db.schema
    .createIndex('earning_rules_enabled_kind')
    .on('earning_rules')
    .columns(['shop_id', 'kind'])
    .unique()
    .where(sql<boolean>`enabled = 1 and name is null`)
    .execute();
  await db.schema
    .createIndex('earning_rules_enabled_name')
    .on('earning_rules')
    .columns(['shop_id', 'name'])
    .unique()
    .where(sql<boolean>`enabled = 1 and name is not null`)
    .execute();

  // A customer's grants by a rule in the period starting at period_start (0: their lifetime).
  await shopTable(db, 'earning_action_counts', ['customer_remote_id', 'rule_id'], (t) =>
    t
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('rule_id', 'bigint', (c) => c.notNull())
      .addColumn('period_start', 'bigint', (c) => c.notNull())
      .addColumn('times', 'integer', (c) => c.notNull())
      .addColumn('last_at', 'bigint', (c) => c.notNull()),
  ).execute();
  // The event a customer's action of this distinct_id granted (0 while its transaction runs).
  await shopTable(db, 'earning_action_claims', ['customer_remote_id', 'distinct_id'], (t) =>
    t
      .addColumn('customer_remote_id', 'bigint', (c) => c.notNull())
      .addColumn('distinct_id', 'text', (c) => c.notNull())
      .addColumn('rule_id', 'bigint', (c) => c.notNull())
      .addColumn('points_event_id', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull()),
  ).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('earning_action_claims').execute();
  await db.schema.dropTable('earning_action_counts').execute();
  await db.schema.dropIndex('earning_rules_enabled_name').execute();
  await db.schema.dropIndex('earning_rules_enabled_kind').execute();
  await sql`delete from earning_rules where name is not null`.execute(db);
  await db.schema
    .createIndex('earning_rules_enabled_kind')
    .on('earning_rules')
    .columns(['shop_id', 'kind'])
    .unique()
    .where(sql.ref('enabled'), '=', 1)
    .execute();
  for (const column of ['claimable', 'limit_count', 'limit_period', 'url', 'description', 'name']) {
    await db.schema.alterTable('earning_rules').dropColumn(column).execute();
  }
}
