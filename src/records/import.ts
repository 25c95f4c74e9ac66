import fs from 'node:fs';
import readline from 'node:readline';
import { parse, type CsvError } from 'csv-parse';
import { isUniqueViolation, transaction } from '../db/dialect.js';
import type { Config } from '../config.js';
import type { DB } from '../db/tables.js';
import type { ErrorDetail } from '../errors.js';
import { parseRemoteId } from '../core/ids.js';
import { CUSTOMER_IDENTIFIER, identifiedField, resolveIdentifiers } from './customer-identifier.js';
import { columnsOf, validateImported, type Resource, type Row } from './resource.js';
import { upsertMany, type Writer } from './write.js';

// Bulk upsert of synced records from NDJSON or CSV, by remote_id: running it twice is harmless.
// Each row gets the validation a PUT body gets; rows are written in big multi-row transactions.
// A bad row is rejected with its line number and reason; the other rows are still imported.

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

/**
 * Rows per transaction: big enough to amortise commits, small enough to keep memory flat and
 * the garbage collector's work small (what a batch builds lives until its commit: an earning
 * import of 1,000,000 orders spent 55 s of CPU with 20,000 rows a batch, 41 s with 10,000), and
 * to hold SQLite's write lock only a few hundred milliseconds beside a running server.
 */
const BATCH = 10_000;

/** The formats a file can hold, and the file name endings that tell them apart. */
export type Format = 'ndjson' | 'csv';
export const FORMATS: readonly Format[] = ['ndjson', 'csv'];
const ENDINGS: Readonly<Record<string, Format>> = { '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.csv': 'csv' };

/** The format a file's name says it holds, or undefined when it says none we read. */
export function formatOf(file: string): Format | undefined {
  const ending = /\.[^./\\]+$/.exec(file)?.[0].toLowerCase();
  return ending === undefined ? undefined : ENDINGS[ending];
}

/** Reads an NDJSON file line by line; blank lines are skipped (but counted). */
export async function* readNdjson(stream: NodeJS.ReadableStream): AsyncGenerator<SourceRow> {
  let line = 0;
  for await (const read of readline.createInterface({ input: stream, crlfDelay: Infinity })) {
    line++;
    // Editors on Windows start UTF-8 files with a byte order mark.
    const text = line === 1 ? read.replace(/^\uFEFF/, '') : read;
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

/**
 * CSV cells are text: numbers, booleans and blanks become what the field expects. A row cannot
 * leave a column out, so a blank customer_identifier is not given, and neither is a blank
 * field it stands for beside a customer_identifier.
 */
function fromCsv(r: Resource, record: Record<string, string>): Row {
  const body: Row = {};
  const identified = record[CUSTOMER_IDENTIFIER] ? identifiedField(r.fields)?.[0] : undefined;
  for (const [name, text] of Object.entries(record)) {
    if (text === '' && (name === CUSTOMER_IDENTIFIER || name === identified)) continue;
    const field = name === 'remote_id' ? ({ kind: 'integer' } as const) : r.fields[name];
    if (field === undefined || text === '') {
      body[name] = field === undefined ? text : field.kind === 'list' ? [] : null;
      continue;
    }
    if ((field.kind === 'integer' || field.kind === 'money') && /^-?\d+(\.\d+)?$/.test(text.trim())) body[name] = Number(text);
    else if (field.kind === 'boolean' && /^(true|false|1|0)$/i.test(text.trim())) body[name] = /^(true|1)$/i.test(text.trim());
    // A list in one cell: as the CSV export writes it (a JSON array), or its items separated by commas.
    else if (field.kind === 'list') body[name] = listCell(text);
    else body[name] = text;
  }
  return body;
}

function listCell(text: string): unknown {
  if (text.trim().startsWith('[')) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** The line a record starts on: csv-parse counts to its end, and a quoted cell may span lines. */
function startLine(info: { lines: number; raw: string }): number {
  const inner = info.raw.replace(/^[\r\n]+/, '').replace(/[\r\n]+$/, '');
  return info.lines - (inner.match(/\n/g)?.length ?? 0);
}

/**
 * Reads a CSV file with a header line naming the fields (remote_id among them). Line numbers
 * are the file's: the header is line 1. A row with more or fewer cells than the header, or a
 * stray quote, is rejected on its own and reading goes on.
 */
export async function* readCsv(r: Resource, stream: NodeJS.ReadableStream): AsyncGenerator<SourceRow> {
  const parser = stream.pipe(parse({ bom: true, skip_empty_lines: true, relax_column_count: true, skip_records_with_error: true, info: true, raw: true }));
  const malformed: SourceRow[] = [];
  parser.on('skip', (error: CsvError) => malformed.push({ line: error.lines ?? 0, error: `invalid CSV: ${error.message}` }));
  let header: string[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number; raw: string } }>) {
    yield* malformed.splice(0);
    if (header === undefined) {
      header = record;
      continue;
    }
    const line = startLine(info);
    if (record.length !== header.length) yield { line, error: `expected ${header.length} cells as in the header line, got ${record.length}` };
    else yield { line, body: fromCsv(r, Object.fromEntries(header.map((name, i) => [name, record[i]!]))) };
  }
  yield* malformed.splice(0);
}

export function readFile(r: Resource, file: string, format: Format, onBytes?: (n: number) => void): AsyncGenerator<SourceRow> {
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  if (onBytes) stream.on('data', (chunk) => onBytes(chunk.length));
  return format === 'csv' ? readCsv(r, stream) : readNdjson(stream);
}

const reasonOf = (details: ErrorDetail[]) => details.map((d) => `${d.param}: ${d.message}`).join('; ');

/** A row that passed the checks a PUT body gets, by remote_id, to be written. */
export type Item = { line: number; id: number; body: Row };

/** The rows of a stretch of the file: those to write, and the lines refused in it. */
export interface CheckedBatch {
  items: Item[];
  rejected: Rejection[];
}

/**
 * Times a batch is written when a unique index refuses its write: a new customer's referral
 * code, drawn without a look-up, that a stored customer holds (earning/customers.ts,
 * drawBulkReferralCodes), or a value another writer took after the checks. The batch's
 * transaction rolls back, and the next attempt checks again (the taken value is then refused
 * as a PUT refuses it) and draws new codes.
 */
const ATTEMPTS = 3;

/** Writes a batch (writeRounds) in a transaction of its own, again when a unique index refused it. */
async function writeBatch(db: DB, w: Writer, r: Resource, batch: Item[], result: ImportResult): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const written: ImportResult = { imported: 0, rejected: [] };
    try {
      await transaction(db, (trx) => writeRounds(trx, w, r, batch, written));
    } catch (error) {
      if (attempt < ATTEMPTS && isUniqueViolation(error)) continue;
      throw error;
    }
    result.imported += written.imported;
    for (const rejection of written.rejected) result.rejected.push(rejection);
    return;
  }
}

/**
 * Writes a batch as if its lines were PUT one after another: a remote_id's later lines go in
 * later rounds, so the last one wins and each is checked against what the earlier ones wrote.
 */
async function writeRounds(trx: DB, w: Writer, r: Resource, batch: Item[], result: ImportResult): Promise<void> {
  // Every customer_identifier of the batch is looked up at once.
  const resolved = await resolveIdentifiers(
    trx,
    w.shopId,
    r.fields,
    batch.map((row) => row.body),
  );
  for (const [i, details] of resolved.errors) result.rejected.push({ line: batch[i]!.line, reason: reasonOf(details) });
  const rounds: Item[][] = [];
  const seen = new Map<number, number>();
  batch.forEach((row, i) => {
    if (resolved.errors.has(i)) return;
    const round = seen.get(row.id) ?? 0;
    seen.set(row.id, round + 1);
    const body = resolved.bodies[i]!;
    (rounds[round] ??= []).push(body === row.body ? row : { ...row, body });
  });
  for (const rows of rounds) {
    const candidates = rows.map((row) => ({ id: row.id, values: columnsOf(r, row.body, 'replace', w.now) }));
    const errors = await upsertMany(trx, w, r, candidates);
    for (const [i, details] of errors) result.rejected.push({ line: rows[i]!.line, reason: reasonOf(details) });
    result.imported += candidates.length - errors.size;
  }
}

/**
 * Reads the rows of a source and checks each as a PUT body is checked (no database needed: the
 * CLI runs this in a thread of its own, db-free, beside the writer), in batches of up to BATCH
 * rows to write in one transaction.
 */
export async function* checkRows(r: Resource, source: AsyncIterable<SourceRow>, config: Config): AsyncGenerator<CheckedBatch> {
  if (r.write !== 'upsert') throw new Error(`${r.table} are not synced from the platform; only records with a remote_id can be imported`);
  let batch: CheckedBatch = { items: [], rejected: [] };
  for await (const row of source) {
    if (row.body === undefined) batch.rejected.push({ line: row.line, reason: row.error ?? 'unreadable' });
    else {
      const { remote_id: rawId, ...body } = row.body;
      // NDJSON is typed JSON, like an API body: remote_id is a number, as it is in responses.
      const id = typeof rawId === 'number' ? parseRemoteId(String(rawId)) : null;
      const details = validateImported(r, body, config);
      if (id === null) details.unshift({ param: 'remote_id', code: 'invalid_format', message: 'remote_id must be a positive integer below 2^53' });
      if (details.length > 0) batch.rejected.push({ line: row.line, reason: reasonOf(details) });
      else batch.items.push({ line: row.line, id: id!, body });
    }
    if (batch.items.length + batch.rejected.length >= BATCH) {
      yield batch;
      batch = { items: [], rejected: [] };
    }
  }
  if (batch.items.length + batch.rejected.length > 0) yield batch;
}

/** Upserts batches of checked rows (checkRows); returns how many were imported and which were rejected. */
export async function writeChecked(
  db: DB,
  shopId: number,
  r: Resource,
  batches: AsyncIterable<CheckedBatch>,
  now: number,
  config: Config,
  options: { onRows?: (n: number) => void; earn?: boolean } = {},
): Promise<ImportResult> {
  if (r.write !== 'upsert') throw new Error(`${r.table} are not synced from the platform; only records with a remote_id can be imported`);
  const result: ImportResult = { imported: 0, rejected: [] };
  const w: Writer = { shopId, now, config, earn: options.earn };
  for await (const { items, rejected } of batches) {
    for (const rejection of rejected) result.rejected.push(rejection);
    if (items.length === 0) continue;
    await writeBatch(db, w, r, items, result);
    options.onRows?.(items.length);
  }
  result.rejected.sort((a, b) => a.line - b.line);
  return result;
}

/** Validates and upserts every row; returns how many were imported and which were rejected. */
export async function importRecords(
  db: DB,
  shopId: number,
  r: Resource,
  source: AsyncIterable<SourceRow>,
  now: number,
  config: Config,
  options: { onRows?: (n: number) => void; earn?: boolean } = {},
): Promise<ImportResult> {
  return writeChecked(db, shopId, r, checkRows(r, source, config), now, config, options);
}
