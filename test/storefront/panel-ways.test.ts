import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { describeInBrowser, launchBrowser, seriousA11yViolations } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger } from '../ledger/fixtures.js';
import { createKey, customerToken } from './fixtures.js';

// The panel's ways to earn as a shopper uses them, in Chromium, by accessible names: a "Claim"
// and a "Visit" button, what is done marked, a refusal in words, and axe finds nothing serious.

describeInBrowser(`<loyalty-panel> ways to earn in Chromium (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let host: http.Server;
  let hostBase: string;
  let visited = 0;

  beforeAll(async () => {
    t = await setup({ now: Date.parse('2026-03-10T06:00:00Z') });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const apiBase = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await createCustomers(t, 1);
    host = http.createServer((req, res) => {
      if (req.url === '/blog') {
        visited++;
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Blog</title>');
        return;
      }
      void customerToken(t, key).then((token) =>
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><title>Shop</title><body><main>
        <loyalty-panel api-base="${apiBase}" publishable-key="${key.publishable_key}" token="${token}"></loyalty-panel></main>
        <script type="module" src="${apiBase}/storefront/loyalty.js"></script></body></html>`),
      );
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostBase = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const key = await createKey(t, [hostBase]);
    for (const body of [
      { kind: 'custom_action', name: 'follow', description: 'Follow us', points_amount: 30, claimable: true },
      { kind: 'visit_url', name: 'blog', description: 'Read our blog', url: `${hostBase}/blog`, points_amount: 5, limit_count: 1, limit_period: 'day' },
      { kind: 'custom_action', name: 'review', description: 'Write a review', points_amount: 100 },
    ]) {
      expect((await t.request('POST', `${API}/earning_rules`, { body })).statusCode).toBe(201);
    }
  });
  afterAll(async () => {
    host?.close();
    await t?.close();
  });

  it('claims a way to earn, visits a page and claims it, marks them done, and says a refusal in words', async () => {
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext({ locale: 'en-US' });
      const page = await context.newPage();
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(error.message));
      await page.goto(`${hostBase}/`);
      const panel = page.locator('loyalty-panel');
      const ways = panel.getByRole('region', { name: 'Ways to earn' });
      await ways.getByRole('button', { name: 'Claim: Follow us' }).waitFor({ timeout: 15_000 });
      // The review is the merchant's to grant: no button.
      expect(await ways.getByRole('listitem').filter({ hasText: 'Write a review' }).getByRole('button').count()).toBe(0);
      expect(await seriousA11yViolations(page)).toEqual([]);

      await ways.getByRole('button', { name: 'Claim: Follow us' }).click();
      await expect.poll(() => panel.locator('[part=balance]').textContent(), { timeout: 15_000 }).toBe('30 points');
      await expect.poll(() => ways.getByRole('listitem').filter({ hasText: 'Follow us' }).textContent()).toContain('Done');
      expect(await ways.getByRole('button', { name: 'Claim: Follow us' }).count()).toBe(0);

      const opened = context.waitForEvent('page');
      await ways.getByRole('button', { name: 'Visit: Read our blog' }).click();
      await (await opened).waitForLoadState();
      await expect.poll(() => panel.locator('[part=balance]').textContent(), { timeout: 15_000 }).toBe('35 points');
      await expect.poll(() => ways.getByRole('listitem').filter({ hasText: 'Read our blog' }).textContent()).toMatch(/Done, again from Mar 11, 2026/);
      expect(visited).toBe(1);
      expect(await panel.locator('[role=alert]').textContent()).toBe('');

      // The merchant disables a way to earn while the page still offers it: the refusal, in words.
      await t.request('POST', `${API}/earning_rules`, { body: { kind: 'custom_action', name: 'newsletter', points_amount: 1, claimable: true } });
      await page.reload();
      const rule = (await t.request('GET', `${API}/earning_rules`)).json().data.find((r: { name: string }) => r.name === 'newsletter');
      await ways.getByRole('button', { name: 'Claim: newsletter' }).waitFor({ timeout: 15_000 });
      expect((await t.request('PATCH', `${API}/earning_rules/${rule.id}`, { body: { enabled: false } })).statusCode).toBe(200);
      await ways.getByRole('button', { name: 'Claim: newsletter' }).click();
      await expect.poll(() => panel.getByRole('alert').textContent(), { timeout: 15_000 }).toBe('This way to earn is not available any more.');
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(failures).toEqual([]);
    } finally {
      await browser.close();
    }
    await expectConsistentLedger(t);
  });
});
