import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { shopRowCount } from '../db/counts.js';
import { csvStream, exportColumns, exportRecords, ndjsonStream } from '../reports/export-csv.js';
import { EXPORT_NAMES, EXPORTS, type ExportName } from '../reports/export-sources.js';
import { getShop } from '../shops/repository.js';
import { CliError, parseId, withDatabase } from './context.js';
import { progressBar } from './import.js';

// `loyalty export <list> --shop N [--format csv|ndjson] [--out FILE]`: what GET
// /exports/{list}.csv answers (or the same records as NDJSON), to a file or stdout.

const FORMATS = ['csv', 'ndjson'] as const;
/** The table each list counts its records in (shop_counts), for the progress bar. */
const TABLES: Record<ExportName, string> = { customers: 'customers', points_events: 'points_events', orders: 'orders', redemptions: 'redemptions' };

export function registerExportCommand(program: Command): void {
  program
    .command('export')
    .description(`Write a whole list as CSV (as GET /exports/<list>.csv answers) or NDJSON. Lists: ${EXPORT_NAMES.join(', ')}.`)
    .argument('<list>', EXPORT_NAMES.join(' | '))
    .requiredOption('--shop <id>', 'the shop whose records to export')
    .option('--format <format>', FORMATS.join(' | '), 'csv')
    .option('--out <file>', 'where to write (default: standard output); a progress bar is shown on a terminal then')
    .action(async (list: string, options: { shop: string; format: string; out?: string }) => {
      if (!Object.hasOwn(EXPORTS, list)) throw new CliError(`list must be one of ${EXPORT_NAMES.join(', ')}, got "${list}"`);
      if (!FORMATS.includes(options.format as (typeof FORMATS)[number]))
        throw new CliError(`--format must be one of ${FORMATS.join(', ')}, got "${options.format}"`);
      const shopId = parseId(options.shop, '--shop');
      const name = list as ExportName;
      await withDatabase(async (database) => {
        if ((await getShop(database.db, shopId)) === undefined) throw new CliError(`no shop with id ${shopId}`);
        const source = EXPORTS[name];
        // The bar goes to the terminal only when the records go to a file.
        const bar = progressBar(options.out === undefined ? 0 : await shopRowCount(database.db, shopId, TABLES[name]));
        const records = exportRecords(database.db, source, shopId, await source.query(database.db, shopId, new URLSearchParams()), Date.now());
        const seen = () => bar.advance(1);
        const stream = options.format === 'csv' ? csvStream(records, exportColumns(source.record), seen) : ndjsonStream(records, seen);
        await pipeline(stream, options.out === undefined ? process.stdout : fs.createWriteStream(options.out));
        bar.done();
      });
    });
}
