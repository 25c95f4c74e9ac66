import { expect, it } from 'vitest';
import { describeInBrowser, launchBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, start } from '../helpers/server.js';

// `npm start` on an empty database, as a new merchant meets it: the banner prints the console's
// address, which signs in; the console asks for nothing that is not there (its icon); the API
// reference at /docs asks nothing of the internet; the audit log shows what the start wrote.

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
      page.on('requestfailed', (request) => failed.push(`failed ${request.url()}`));

      await page.goto(consoleUrl!);
      await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
      // The tab's icon is the console's own.
      const icon = await page.locator('link[rel="icon"]').getAttribute('href');
      expect((await fetch(`${server.url}${icon}`)).status).toBe(200);

      // The start's writes, said in words: the token and the demo shop's programme and customers.
      await page.evaluate("location.hash = '#/audit-log'");
      const log = page.getByRole('region', { name: 'Audit log entries' });
      await log.getByRole('row').filter({ hasText: 'Api token created' }).waitFor();
      const seeded = log.getByRole('row').filter({ hasText: 'demo data added' });
      expect(await seeded.innerText()).toMatch(/The server[\s\S]*Customers: 8/);

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
