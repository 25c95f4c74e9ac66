import fs from 'node:fs';
import type { Command } from 'commander';
import { RESOURCES, resourceNamed } from '../records/resources/index.js';
import { FORMATS, formatOf, writeChecked, type Format } from '../records/import.js';
import { checkedInThread } from './import-reader.js';
import { bulkWrite } from '../db/dialect.js';
import { getShop } from '../shops/repository.js';
import { CliError, output, parseId, withDatabase } from './context.js';

/** Some rows were rejected and the others imported: neither success (0) nor failure (1, 2). */
const EXIT_ROWS_REJECTED = 3;

const importable = RESOURCES.filter((r) => r.write === 'upsert').map((r) => r.table);

/** A one-line progress bar (only on a terminal), redrawn at most 10 times a second. */
export function progressBar(total: number): { advance(bytes: number): void; done(): void } {
  if (!process.stdout.isTTY || total === 0) return { advance() {}, done() {} };
  let seen = 0;
  let drawn = 0;
  const started = Date.now();
  const draw = () => {
    const share = Math.min(1, seen / total);
    const width = 30;
    const filled = Math.round(share * width);
    const seconds = (Date.now() - started) / 1000;
    process.stdout.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${seconds.toFixed(1)} s`);
  };
  return {
    advance(bytes) {
      seen += bytes;
      if (Date.now() - drawn > 100) {
        drawn = Date.now();
        draw();
      }
    },
    done() {
      seen = total;
      draw();
      process.stdout.write('\n');
    },
  };
}

export function registerImportCommand(program: Command): void {
  program
    .command('import')
    .description(
      `Upsert records by remote_id from an NDJSON (.ndjson, .jsonl) or CSV (.csv) file; re-running it is harmless. Resources: ${importable.join(', ')}.\n` +
        "Each row is validated as a PUT body is. Bad rows are listed by line number (the file's: a CSV header is line 1) and skipped; " +
        `the others are imported. Exit status: 0 when every row was imported, ${EXIT_ROWS_REJECTED} when some were rejected (the others were imported), ` +
        '2 for a bad argument, 1 for any other failure (rows already written stay; re-running is harmless).',
    )
    .argument('<resource>', importable.join(' | '))
    .argument('<file>', 'NDJSON (one JSON object per line) or CSV with a header line; remote_id is required')
    .requiredOption('--shop <id>', 'the shop the records belong to')
    .option('--format <format>', `${FORMATS.join(' | ')}; by default the file name's ending tells`)
    .option('--json', 'print the summary as JSON: {"imported": n, "rejected": [{"line": n, "reason": "…"}], "seconds": s}')
    .option('--no-earn', 'store the records without applying the earning rules (paid orders earn nothing, new customers no signup points)')
    .action(async (resource: string, file: string, options: { shop: string; format?: string; json?: boolean; earn: boolean }) => {
      const r = resourceNamed(resource);
      if (r === undefined || r.write !== 'upsert') throw new CliError(`resource must be one of ${importable.join(', ')}, got "${resource}"`);
      if (options.format !== undefined && !FORMATS.includes(options.format as Format))
        throw new CliError(`--format must be one of ${FORMATS.join(', ')}, got "${options.format}"`);
      const format = (options.format as Format | undefined) ?? formatOf(file);
      if (format === undefined) throw new CliError(`unsupported file format: ${file} (name it .ndjson, .jsonl or .csv, or pass --format ${FORMATS.join('|')})`);
      if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new CliError(`no such file: ${file}`);
      const shopId = parseId(options.shop, '--shop');
      await withDatabase(async (database, config) => {
        if ((await getShop(database.db, shopId)) === undefined) throw new CliError(`no shop with id ${shopId}`);
        const bar = progressBar(options.json ? 0 : fs.statSync(file).size);
        const started = Date.now();
        const batches = checkedInThread({ table: r.table, file, format, config }, (n) => bar.advance(n));
        const result = await bulkWrite(database.db, r.table, () => writeChecked(database.db, shopId, r, batches, Date.now(), config, { earn: options.earn }));
        bar.done();
        const seconds = (Date.now() - started) / 1000;
        output(options.json ?? false, { ...result, seconds }, () => {
          const lines = [
            `Imported ${result.imported} ${r.plural}, rejected ${result.rejected.length} ${result.rejected.length === 1 ? 'row' : 'rows'} (${seconds.toFixed(1)} s).`,
          ];
          for (const { line, reason } of result.rejected.slice(0, 100)) lines.push(`  line ${line}: ${reason}`);
          if (result.rejected.length > 100) lines.push(`  … and ${result.rejected.length - 100} more (use --json for all)`);
          return lines.join('\n');
        });
        if (result.rejected.length > 0) process.exitCode = EXIT_ROWS_REJECTED;
      });
    });
}
