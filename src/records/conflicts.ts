import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { existingIds, holdersOf, holdersWhen } from './repository.js';
import { exclusivesOf, type Exclusive, type Resource, type Row } from './resource.js';
import { pushTo } from '../core/maps.js';

// Rules that need the database: unique fields and references to other records. One pass
// serves a single write and a whole import batch alike.

export interface Candidate {
  /** The record's ID when it exists or is being upserted; null for a new native record. */
  id: number | null;
  /** Column values about to be written (a PATCH: only the changed ones). */
  values: Row;
  /** The whole record as it will be stored (a PATCH: merged with the stored one), when it differs from `values`. */
  merged?: Row;
}

/** The detail that reports a unique value another record of the shop holds. */
function taken(r: Resource, name: string): ErrorDetail {
  return { param: name, code: `${name}_taken`, message: `Another ${r.singular} of this shop already has this ${name.replace(/_/g, ' ')}` };
}

/**
 * The errors of each candidate, by index (absent when it has none). Within a batch the first
 * holder of a unique value wins and later ones are rejected, as they would be one by one.
 */
export async function conflicts(db: DB, shopId: number, r: Resource, candidates: Candidate[]): Promise<Map<number, ErrorDetail[]>> {
  const errors = new Map<number, ErrorDetail[]>();
  const add = (i: number, detail: ErrorDetail) => pushTo(errors, i, detail);
  for (const [name, field] of Object.entries(r.fields)) {
    if (field.unique) {
      const norm = (v: unknown) => (field.unique === 'ci' && typeof v === 'string' ? v.toLowerCase() : v);
      const wanted = candidates.map((c) => (c.values[name] === null || c.values[name] === undefined ? undefined : norm(c.values[name])));
      const holders = await holdersOf(db, shopId, r, name, field.unique, [...new Set(wanted.filter((v) => v !== undefined))]);
      const seen = new Map<unknown, number | null>();
      wanted.forEach((value, i) => {
        if (value === undefined) return;
        const id = candidates[i]!.id;
        const holder = holders.get(value);
        const batchHolder = seen.get(value);
        const takenHere = holder !== undefined && holder !== id;
        const takenInBatch = seen.has(value) && (batchHolder === null || batchHolder !== id);
        if (takenHere || takenInBatch) {
          add(i, taken(r, name));
        } else {
          seen.set(value, id);
        }
      });
    }
    if (field.references) {
      const ref = field.references;
      const ids = candidates.map((c) => c.values[name]).filter((v): v is number => typeof v === 'number');
      const found = await existingIds(db, shopId, ref.table, ref.column, [...new Set(ids)]);
      candidates.forEach((c, i) => {
        const value = c.values[name];
        if (typeof value === 'number' && !found.has(value)) add(i, { param: name, code: ref.code, message: ref.message });
      });
    }
  }
  for (const rule of exclusivesOf(r)) await exclusiveConflicts(db, shopId, r, rule, candidates, add);
  return errors;
}

/** Candidates that would make a second record hold an exclusive value (see Resource.exclusive). */
async function exclusiveConflicts(db: DB, shopId: number, r: Resource, rule: Exclusive, candidates: Candidate[], add: (i: number, d: ErrorDetail) => void) {
  const seen = new Set<unknown>();
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i]!;
    const record = c.merged ?? c.values;
    const value = record[rule.field];
    if (record[rule.when.field] !== rule.when.value || value === null || value === undefined || rule.except?.includes(value as string)) continue;
    const holders = await holdersWhen(db, shopId, r, rule, value);
    if (seen.has(value) || holders.some((id) => id !== c.id)) add(i, { param: rule.field, code: rule.code, message: rule.message });
    else seen.add(value);
  }
}

/**
 * Why a write that passed the precheck then failed on a unique index: another writer took a
 * value in between. The precheck run again now finds which field(s) clash; only when it finds
 * nothing (the other record is gone again) is every unique field named. Run it outside the
 * failed write's transaction: a failed statement aborts a PostgreSQL transaction, and the
 * other writer's row is visible only once committed.
 */
export async function lostRaceErrors(db: DB, shopId: number, r: Resource, candidate: Candidate): Promise<ErrorDetail[]> {
  const found = (await conflicts(db, shopId, r, [candidate])).get(0);
  if (found !== undefined) return found;
  const named = Object.entries(r.fields)
    .filter(([, f]) => f.unique)
    .map(([name]) => taken(r, name));
  return [...named, ...exclusivesOf(r).map((rule) => ({ param: rule.field, code: rule.code, message: rule.message }))];
}
