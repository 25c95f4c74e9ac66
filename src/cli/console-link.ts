import type { Command } from 'commander';
import { serverUrl } from '../config.js';
import { CONSOLE_PREFIX } from '../console/routes.js';
import { isoTime } from '../clock.js';
import { getShop } from '../shops/repository.js';
import { createAuditedToken } from './shops.js';
import { CliError, output, parseId, withDatabase } from './context.js';

export { serverUrl };

function baseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CliError(`--url must be an http or https URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--url must be an http or https URL, got "${value}"`);
  return url.href.replace(/\/+$/, '');
}

/** How long a console link's token works, unless --hours says otherwise. */
export const CONSOLE_TOKEN_HOURS = 12;

export function registerConsoleLinkCommand(program: Command): void {
  program
    .command('console-link')
    .description('Create an API token for a shop and print a console sign-in URL carrying it (in the fragment, which no server log sees)')
    .requiredOption('--shop <id>', 'shop id')
    .option('--name <name>', 'a label for the new token (revoke it with `loyalty tokens revoke`)', 'console')
    .option('--hours <hours>', 'hours until the token stops working', (value) => parseId(value, '--hours'), CONSOLE_TOKEN_HOURS)
    .option('--url <url>', "the server's address as the browser reaches it (default: PUBLIC_URL, else HOST and PORT)", baseUrl)
    .option('--json', 'print JSON', false)
    .action(async (opts: { shop: string; name: string; hours: number; url?: string; json: boolean }) => {
      const shopId = parseId(opts.shop, '--shop');
      await withDatabase(async ({ db }, config) => {
        if (!(await getShop(db, shopId))) throw new CliError(`No shop with id ${shopId}`);
        const now = Date.now();
        // Short-lived (console/README.md): the URL may sit in a browser's history.
        const expiresAt = now + opts.hours * 3_600_000;
        const { token, row } = await createAuditedToken(db, shopId, opts.name, now, { expiresAt });
        const url = `${opts.url ?? serverUrl(config)}${CONSOLE_PREFIX}/#token=${encodeURIComponent(token)}`;
        output(opts.json, { url, token_id: row.id, shop_id: shopId, expires_at: isoTime(expiresAt) }, () =>
          [
            `Sign in to the console of shop ${shopId} (token ${row.id}, "${row.name}"; keep this URL secret):`,
            url,
            `The token expires at ${isoTime(expiresAt)}; revoke it sooner with \`loyalty tokens revoke ${row.id} --shop ${shopId}\`.`,
          ].join('\n'),
        );
      });
    });
}
