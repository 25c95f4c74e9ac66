import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.js';
import type { DB } from '../../src/db/tables.js';
import { insertRecords, upsertStored } from '../../src/records/repository.js';
import { columnsOf, validateImported, type Resource, type Row } from '../../src/records/resource.js';

// Valid bodies for any resource, made from its description: the i-th sample differs from
// its neighbours, and sortable values repeat every 7 so that sorts meet ties.

export const REFERENCED_ID = 900_000;

/** Upserts rows of a record's own columns (remote_id and its fields) as the import writes them, at `now`. */
export async function upsertRecords(db: DB, shopId: number, r: Resource, rows: Row[], now: number): Promise<void> {
  await upsertStored(
    db,
    r,
    rows.map((row) => ({ shop_id: shopId, ...row, created_at: now, updated_at: now })),
  );
}

export function sample(r: Resource, i: number): Row {
  if (r.table === 'earning_rules') return earningRuleSample(i);
  if (r.table === 'campaigns') return campaignSample(i);
  const body: Row = {};
  for (const [name, field] of Object.entries(r.fields)) {
    if (field.kind === 'secret' || field.readOnly) continue;
    if (field.references) {
      body[name] = REFERENCED_ID;
      continue;
    }
    const k = field.unique ? i : i % 7;
    switch (field.kind) {
      case 'text':
        if (field.format === 'email') body[name] = `user${i}@example.com`;
        else if (field.format === 'uri') body[name] = `https://example.com/hooks/${k}`;
        else if (field.format === 'date') body[name] = `1990-01-${String(k + 1).padStart(2, '0')}`;
        else if (field.pattern) body[name] = field.example;
        else body[name] = `name${String(k).padStart(5, '0')}`;
        break;
      case 'enum':
        body[name] = field.values[k % field.values.length];
        break;
      case 'integer':
        body[name] = field.minimum + k;
        break;
      case 'money':
        body[name] = 10 + k + 0.25;
        break;
      case 'time':
        body[name] = new Date(Date.UTC(2026, 0, 1 + k)).toISOString();
        break;
      case 'boolean':
        body[name] = k % 2 === 0;
        break;
      case 'list':
        body[name] = 'values' in field.items ? [field.items.values[k % field.items.values.length]] : [];
        break;
    }
  }
  return body;
}

/**
 * Earning rules have fields per kind, and one enabled rule per kind: samples cycle through the
 * kinds with the fields of each, disabled so that any number of them may exist.
 */
function earningRuleSample(i: number): Row {
  const kinds = ['order', 'signup', 'birthday', 'referral_referrer', 'referral_friend', 'subscription_billing'];
  const kind = kinds[i % kinds.length]!;
  const credits = i % 3 === 0 ? { credits_amount: 1.5 } : {};
  if (kind === 'order')
    return { enabled: false, kind, points_per_unit: 1 + (i % 7), unit_amount: 1, min_order_total: i % 2 === 0 ? null : 20, currency: 'EUR', ...credits };
  return { enabled: false, kind, points_amount: 10 + (i % 7), ...credits };
}

/** Campaigns end after they start, and give a multiplier above 1 or bonus points. */
function campaignSample(i: number): Row {
  const k = i % 7;
  const day = (d: number) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString();
  return {
    name: `name${String(k).padStart(5, '0')}`,
    starts_at: day(k),
    ends_at: day(k + 1 + (i % 3)),
    ...(i % 2 ? { multiplier: 1.5 } : { bonus_points: 10 + k }),
  };
}

/** Every record a sample refers to (a customer, a subscription contract). */
export async function seedReferences(db: DB, shopId: number, resources: readonly Resource[], now: number): Promise<void> {
  for (const r of resources) {
    if (r.id !== 'remote_id') continue;
    await upsertRecords(db, shopId, r, [{ remote_id: REFERENCED_ID, ...columnsOf(r, sample(r, 999_999), 'replace', now) }], now);
  }
}

/** Inserts n samples with multi-row writes; returns their IDs in ascending order. */
export async function seed(db: DB, shopId: number, r: Resource, n: number, now: number): Promise<number[]> {
  const rows: Row[] = [];
  for (let i = 0; i < n; i++) {
    const body = sample(r, i);
    const errors = validateImported(r, body, loadConfig({}));
    if (errors.length > 0) throw new Error(`sample ${i} of ${r.table} is invalid: ${JSON.stringify(errors)}`);
    const columns = columnsOf(r, body, 'create', now);
    for (const [name, field] of Object.entries(r.fields)) if (field.kind === 'secret') columns[name] = `whsec_${randomBytes(8).toString('hex')}`;
    rows.push(columns);
  }
  if (r.id === 'remote_id') {
    // Gaps between remote ids, and not the order they were written in.
    const ids = rows.map((_, i) => 1 + ((i * 7919) % n) * 3);
    await upsertRecords(
      db,
      shopId,
      r,
      rows.map((row, i) => ({ remote_id: ids[i], ...row })),
      now,
    );
    return ids.sort((a, b) => a - b);
  }
  return insertRecords(db, shopId, r, rows, now);
}
