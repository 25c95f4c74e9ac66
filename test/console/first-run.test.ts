import { expect, it } from 'vitest';
import { describeInBrowser, launchBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, start } from '../helpers/server.js';

// `npm start` on an empty database, as a new merchant meets it: the banner prints the console's
// address, which signs in; the console asks for nothing that is not there (its icon); the API
// reference at /docs asks nothing of the internet; the audit log shows what the start wrote:
// its token, the demo's data and the demo's storefront key.

describeInBrowser(`the first run, in a browser (${TEST_DIALECT})`, () => {
  it("prints the console's address, which signs in; no request fails or leaves the server; the start's writes are in the audit log", async () => {
    const server = await start(await freshDatabase(), { LOYALTY_BOOTSTRAP: 'true' }, { capture: true });
    await expect.poll(() => server.output().stdout, { timeout: 30_000 }).toContain('/storefront/demo');
    const stdout = server.output().stdout;
    const consoleUrl = /^Merchant console \(signs in with the token\): (\S+)$/m.exec(stdout)?.[1];
    const token = /^ {2}(lty_\S+)$/m.exec(stdout)?.[1];
    expect(consoleUrl, stdout).toBe(`${server.url}/console/#token=${token}`);

    const browser = await launchBrowser();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const failed: string[] = [];
      const elsewhere: string[] = [];
      page.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      page.on('request', (request) => {
        if (!request.url().startsWith(server.url) && !request.url().startsWith('data:')) elsewhere.push(request.url());
      });
      // A request the page itself gives up (the Overview's reports, when the test moves on before they answer) is no failure.
      page.on('requestfailed', (request) => {
        if (request.failure()?.errorText !== 'net::ERR_ABORTED') failed.push(`failed ${request.url()}: ${request.failure()?.errorText}`);
      });

      await page.goto(consoleUrl!);
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      // The tab's icon is the console's own.
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect((await fetch(`${server.url}${icon}`)).status).toBe(200);

      // The start's writes, said in words: the token and the demo shop's programme and customers.
      await page.evaluate("location.hash = '#/audit-log'");
      const log = page.getByRole('region', { name: 'Audit log entries' });
      // (hasText as a string ignores case: the API's abbreviations are matched as written.)
      const tokenRow = log.getByRole('row').filter({ hasText: /API token created/ });
      await tokenRow.waitFor();
      expect(await tokenRow.innerText()).toMatch(/API token created\s+API token \d+[\s\S]*Scopes: admin\s/);
      // The demo's counts are what it added, not a record "created with" them.
      const seeded = log.getByRole('row').filter({ hasText: 'demo data added' });
      expect(await seeded.innerText()).toMatch(/The server[\s\S]*Customers: 8[\s\S]*VIP tiers: 3/);
      expect(await seeded.innerText()).not.toContain('Created with');
      // The demo's storefront key too, by the server, without its secret.
      const key = log.getByRole('row').filter({ hasText: 'Storefront key created' });
      expect(await key.innerText()).toMatch(/The server[\s\S]*pk_/);
      expect(await key.innerText()).not.toMatch(/sks_/);
      // Its values in words: a time as the console shows times, no list as JSON.
      expect(await key.innerText()).toMatch(/Allowed origins: none[\s\S]*Created at: \d+ \w+ \d{4}, \d\d:\d\d UTC/);
      const entries = await fetch(`${server.url}/merchant_api/v1/audit_events?resource=storefront_key`, { headers: { authorization: `Bearer ${token}` } });
      const keys = await fetch(`${server.url}/merchant_api/v1/storefront_keys`, { headers: { authorization: `Bearer ${token}` } });
      const [made] = ((await keys.json()) as { data: { id: number; publishable_key: string }[] }).data;
      expect(((await entries.json()) as { data: unknown[] }).data).toMatchObject([
        {
          actor: { type: 'system' },
          action: 'storefront_key.created',
          resource_id: String(made!.id),
          changes: { publishable_key: [null, made!.publishable_key], secret: [null, '[redacted]'] },
        },
      ]);

      await page.goto(`${server.url}/docs/`);
      await page.getByText('Loyalty API', { exact: false }).first().waitFor();
      await page.waitForLoadState('networkidle');
      expect(elsewhere).toEqual([]);
      expect(failed).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
