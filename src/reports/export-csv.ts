import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { sql } from 'kysely';
import type { TSchema } from 'typebox';
import type { DB } from '../db/tables.js';
import type { ExportSource } from './export-sources.js';

// Exports (docs/reports.md): a whole filtered list, walked by ID a page at a time, so memory
// stays bounded whatever its size; as CSV (RFC 4180: a header row, CRLF, quoted as needed) or
// NDJSON. Nested objects become a column per field (`customer.remote_id`).

/** Records read per query. */
export const EXPORT_PAGE = 500;

type Schema = TSchema & { properties?: Record<string, Schema>; anyOf?: Schema[] };

/** The columns of a record: its fields, and an object field's own fields one level down. */
export function exportColumns(record: TSchema): string[] {
  const out: string[] = [];
  for (const [name, field] of Object.entries((record as Schema).properties ?? {})) {
    const object = field.properties ?? field.anyOf?.find((s) => s.properties !== undefined)?.properties;
    if (object === undefined) out.push(name);
    else for (const inner of Object.keys(object)) out.push(`${name}.${inner}`);
  }
  return out;
}

/** Every record of the list, in ID order: one query of EXPORT_PAGE rows at a time. */
export async function* exportRecords(
  db: DB,
  source: ExportSource,
  shopId: number,
  query: Awaited<ReturnType<ExportSource['query']>>,
  now: number,
): AsyncGenerator<object> {
  const idKey = source.idColumn.slice(source.idColumn.lastIndexOf('.') + 1);
  for (let after = 0; ;) {
    const rows = await query.where(sql.ref(source.idColumn), '>', after).orderBy(sql.ref(source.idColumn)).limit(EXPORT_PAGE).execute();
    if (rows.length === 0) return;
    yield* await source.toJson(db, shopId, rows, now);
    if (rows.length < EXPORT_PAGE) return;
    after = Number((rows.at(-1) as Record<string, unknown>)[idKey]);
  }
}

/** Characters that make a spreadsheet read a cell as a formula (OWASP's CSV injection). */
const FORMULA = /^[=+\-@\t\r]/;

/** One cell: text as is (a formula's lead escaped with '), numbers and booleans as written, nested values as JSON. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return FORMULA.test(text) ? `'${text}` : text;
}

function cellsOf(record: object, columns: readonly string[]): string[] {
  return columns.map((column) => {
    const dot = column.indexOf('.');
    const json = record as Record<string, unknown>;
    if (dot < 0 || column in json) return csvCell(json[column]);
    const inner = json[column.slice(0, dot)] as Record<string, unknown> | null | undefined;
    return csvCell(inner?.[column.slice(dot + 1)]);
  });
}

/** The records as CSV text, streamed with backpressure. `seen` counts records as they go. */
export function csvStream(records: AsyncIterable<object>, columns: readonly string[], seen: () => void = () => {}): Readable {
  const rows = Readable.from(
    (async function* () {
      for await (const record of records) {
        seen();
        yield cellsOf(record, columns);
      }
    })(),
  );
  return rows.pipe(stringify({ header: true, columns: [...columns], record_delimiter: 'windows' }));
}

/** The records as NDJSON, one JSON object per line. */
export function ndjsonStream(records: AsyncIterable<object>, seen: () => void = () => {}): Readable {
  return Readable.from(
    (async function* () {
      for await (const record of records) {
        seen();
        yield `${JSON.stringify(record)}\n`;
      }
    })(),
  );
}
