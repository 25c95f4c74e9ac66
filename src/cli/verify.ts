import type { Command } from 'commander';
import { getShop } from '../shops/repository.js';
import { verifyLedger } from '../ledger/verify.js';
import { CliError, output, parseId, table, withDatabase } from './context.js';

// `loyalty verify [--shop N] [--json]`: checks every ledger invariant and prints each
// discrepancy; exits 1 when there is any, so scripts and CI can rely on it.

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify')
    .description(
      "Check every ledger invariant: stored balances = what open lots hold = the sum of the events; each lot's remaining = its amount " +
        'less its consumptions; lifetime totals and next expiry as the history says; nothing negative. Prints each discrepancy and exits 1 when there is any.',
    )
    .option('--shop <id>', 'check one shop (default: every shop)')
    .option('--json', 'print {"ok": …, "discrepancies": […]} as JSON', false)
    .action(async (opts: { shop?: string; json: boolean }) => {
      const shopId = opts.shop === undefined ? null : parseId(opts.shop, '--shop');
      const found = await withDatabase(async ({ db }) => {
        if (shopId !== null && (await getShop(db, shopId)) === undefined) throw new CliError(`no shop with id ${shopId}`);
        const discrepancies = await verifyLedger(db, shopId);
        const scope = shopId === null ? 'every shop' : `shop ${shopId}`;
        output(opts.json, { ok: discrepancies.length === 0, discrepancies }, () =>
          discrepancies.length === 0
            ? `The ledger of ${scope} is consistent.`
            : `${discrepancies.length} discrepanc${discrepancies.length === 1 ? 'y' : 'ies'} in the ledger of ${scope}:\n` +
              table(discrepancies as unknown as Record<string, unknown>[], ['shop_id', 'check', 'subject', 'expected', 'actual']),
        );
        return discrepancies.length;
      });
      if (found > 0) process.exitCode = 1;
    });
}
