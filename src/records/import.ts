import fs from 'node:fs';
import readline from 'node:readline';
import { parse } from 'csv-parse';
import { transaction } from '../db/dialect.js';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { parseRemoteId } from '../customers/repository.js';
import { conflicts } from './conflicts.js';
import { upsertRecords } from './repository.js';
import { columnsOf, validateImported, type Resource, type Row } from './resource.js';

// Bulk upsert of synced records from NDJSON or CSV, by remote_id: running it twice is harmless.
// Each row gets the validation a PUT body gets; rows are written in big multi-row transactions.

export interface SourceRow {
  line: number;
  body?: Row;
  /** Why the line could not even be read as a record. */
  error?: string;
}

export interface Rejection {
  line: number;
  reason: string;
}

export interface ImportResult {
  imported: number;
  rejected: Rejection[];
}

/** Rows per transaction: big enough to amortise commits, small enough to keep memory flat. */
const BATCH = 20_000;

/** Reads an NDJSON file line by line; blank lines are skipped. */
export async function* readNdjson(stream: NodeJS.ReadableStream): AsyncGenerator<SourceRow> {
  let line = 0;
  for await (const text of readline.createInterface({ input: stream, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    try {
      const body = JSON.parse(text);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) yield { line, error: 'a line must hold one JSON object' };
      else yield { line, body };
    } catch (error) {
      yield { line, error: `invalid JSON: ${(error as Error).message}` };
    }
  }
}

/** CSV cells are text: numbers, booleans and blanks become what the field expects. */
function fromCsv(r: Resource, record: Record<string, string>): Row {
  const body: Row = {};
  for (const [name, text] of Object.entries(record)) {
    const field = name === 'remote_id' ? ({ kind: 'integer' } as const) : r.fields[name];
    if (field === undefined || text === '') {
      body[name] = field === undefined ? text : null;
      continue;
    }
    if ((field.kind === 'integer' || field.kind === 'money') && /^-?\d+(\.\d+)?$/.test(text.trim())) body[name] = Number(text);
    else if (field.kind === 'boolean' && /^(true|false|1|0)$/i.test(text.trim())) body[name] = /^(true|1)$/i.test(text.trim());
    else body[name] = text;
  }
  return body;
}

/** Reads a CSV file with a header line naming the fields (remote_id among them). */
export async function* readCsv(r: Resource, stream: NodeJS.ReadableStream): AsyncGenerator<SourceRow> {
  const parser = stream.pipe(parse({ columns: true, skip_empty_lines: true, trim: false, info: true, relax_column_count: true }));
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
      yield { line: info.lines, body: fromCsv(r, record) };
    }
  } catch (error) {
    const lines = (error as { lines?: number }).lines;
    yield { line: lines ?? 0, error: `invalid CSV: ${(error as Error).message}` };
  }
}

export function readFile(r: Resource, file: string, onBytes?: (n: number) => void): AsyncGenerator<SourceRow> {
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  if (onBytes) stream.on('data', (chunk) => onBytes(chunk.length));
  return /\.csv$/i.test(file) ? readCsv(r, stream) : readNdjson(stream);
}

const reasonOf = (details: ErrorDetail[]) => details.map((d) => `${d.param}: ${d.message}`).join('; ');

async function writeBatch(db: DB, shopId: number, r: Resource, batch: { line: number; id: number; body: Row }[], now: number, result: ImportResult): Promise<void> {
  // The last line for a remote_id wins, as if the lines were PUT one after another.
  const byId = new Map<number, { line: number; id: number; body: Row }>();
  for (const row of batch) {
    byId.delete(row.id);
    byId.set(row.id, row);
  }
  const rows = [...byId.values()];
  const candidates = rows.map((row) => ({ id: row.id, values: columnsOf(r, row.body, 'replace', now) }));
  await transaction(db, async (trx) => {
    const errors = await conflicts(trx, shopId, r, candidates);
    const good: Row[] = [];
    candidates.forEach((c, i) => {
      const details = errors.get(i);
      if (details) result.rejected.push({ line: rows[i]!.line, reason: reasonOf(details) });
      else good.push({ remote_id: c.id, ...c.values });
    });
    await upsertRecords(trx, shopId, r, good, now);
    result.imported += good.length + (batch.length - rows.length);
  });
}

/** Validates and upserts every row; returns how many were imported and which were rejected. */
export async function importRecords(db: DB, shopId: number, r: Resource, source: AsyncIterable<SourceRow>, now: number, onRows?: (n: number) => void): Promise<ImportResult> {
  if (r.write !== 'upsert') throw new Error(`${r.table} are not synced from the platform; only records with a remote_id can be imported`);
  const result: ImportResult = { imported: 0, rejected: [] };
  let batch: { line: number; id: number; body: Row }[] = [];
  for await (const row of source) {
    if (row.body === undefined) {
      result.rejected.push({ line: row.line, reason: row.error ?? 'unreadable' });
      continue;
    }
    const { remote_id: rawId, ...body } = row.body;
    const id = typeof rawId === 'number' ? parseRemoteId(String(rawId)) : null;
    const details = validateImported(r, body);
    if (id === null) details.unshift({ param: 'remote_id', code: 'invalid_format', message: 'remote_id must be a positive integer below 2^53' });
    if (details.length > 0) {
      result.rejected.push({ line: row.line, reason: reasonOf(details) });
      continue;
    }
    batch.push({ line: row.line, id: id!, body });
    if (batch.length >= BATCH) {
      await writeBatch(db, shopId, r, batch, now, result);
      onRows?.(batch.length);
      batch = [];
    }
  }
  if (batch.length > 0) await writeBatch(db, shopId, r, batch, now, result);
  result.rejected.sort((a, b) => a.line - b.line);
  return result;
}
