import { expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/database.js';
import { describeInBrowser, launchBrowser, seriousA11yViolations } from '../helpers/browser.js';
import { freshDatabase, start } from '../helpers/server.js';
import { loyalty } from '../ledger/fixtures.js';

// `npm start` on an empty database prints the URL of /storefront/demo, which hosts the panel
// for a demo customer while the demo shop exists: a page for shoppers, showing the same shopper
// on every reload.

describeInBrowser(`the panel's demo page (${TEST_DIALECT})`, () => {
  it('is printed on a fresh database, speaks to shoppers, keeps its shopper on reload, and is gone with the demo shop', async () => {
    const url = await freshDatabase();
    const server = await start(url, { LOYALTY_BOOTSTRAP: 'true' }, { capture: true });
    let stdout = server.output().stdout;
    for (let i = 0; i < 50 && !stdout.includes('/storefront/demo'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      stdout = server.output().stdout;
    }
    const demo = /^Shopper's loyalty panel \(demo customer\): (\S+)$/m.exec(stdout)?.[1];
    expect(demo, stdout).toBe(`${server.url}/storefront/demo`);
    const merchantToken = /shown only this once:\n\n {2}(\S+)\n/.exec(stdout)?.[1];
    expect(merchantToken, stdout).toBeDefined();
    const merchant = (path: string, body?: unknown) =>
      fetch(`${server.url}/merchant_api/v1${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${merchantToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    const page = await fetch(demo!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/<loyalty-panel api-base="" publishable-key="pk_[\w-]+" token-url="\/storefront\/demo\/token">/);
    expect(html).toContain('<script type="module" src="/storefront/loyalty.js">');
    // An icon of its own, in the page: the browser asks for no /favicon.ico (a 404).
    expect(html).toMatch(/<link rel="icon" type="image\/svg\+xml" href="data:image\/svg\+xml,%3Csvg%20/);
    const script = await fetch(`${server.url}/storefront/loyalty.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(await script.text()).toContain('loyalty-panel');

    const { token } = (await (await fetch(`${server.url}/storefront/demo/token`)).json()) as { token: string };
    const me = await fetch(`${server.url}/storefront_api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { points_balance: number } }).data.points_balance).toBeGreaterThan(0);
    const rewards = (await (await fetch(`${server.url}/storefront_api/v1/me/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      data: unknown[];
    };
    expect(rewards.data.length).toBeGreaterThan(0);

    const browser = await launchBrowser();
    try {
      const tab = await (await browser.newContext({ locale: 'en-US' })).newPage();
      await tab.goto(demo!);
      const heading = await tab.getByRole('heading', { level: 1 }).textContent();
      const shop = ((await (await merchant('/shop')).json()) as { data: { name: string } }).data.name;
      expect(heading).toBe(`Your rewards at ${shop}`);
      const body = await tab.locator('body > p').textContent();
      expect(body).toMatch(/^Welcome back, \w+\. Earn points with every order/);
      expect(body).not.toMatch(/web component|loyalty-panel|demo customer/i);
      const balance = tab.locator('loyalty-panel').locator('[part=balance]');
      await expect.poll(() => balance.count(), { timeout: 15_000 }).toBe(1);
      const shown = await balance.textContent();
      // The demo's tiers say what they are worth.
      await tab.locator('loyalty-panel').getByText('1.25× points on orders').waitFor();
      await tab.locator('loyalty-panel').getByText('1.5× points on orders').waitFor();
      expect(await seriousA11yViolations(tab)).toEqual([]);

      // Another customer becomes the richest: a reload still shows the same shopper.
      const customers = ((await (await merchant('/customers?pagination[per_page]=250')).json()) as { data: { remote_id: number; points_balance: number }[] })
        .data;
      const richest = customers.reduce((a, b) => (b.points_balance > a.points_balance ? b : a));
      const other = customers.find((c) => c.remote_id !== richest.remote_id)!;
      const grant = await merchant('/points_events', {
        customer_identifier: String(other.remote_id),
        source: 'manual',
        points_amount: richest.points_balance + 1000,
      });
      expect(grant.status).toBe(201);
      await tab.reload();
      await expect.poll(() => balance.count(), { timeout: 15_000 }).toBe(1);
      expect(await balance.textContent()).toBe(shown);
      expect(await tab.locator('body > p').textContent()).toBe(body);
    } finally {
      await browser.close();
    }

    expect((await loyalty(url, 'shops', 'delete', '--shop', '1', '--yes')).code).toBe(0);
    expect((await fetch(demo!)).status).toBe(404);
    expect((await fetch(`${server.url}/storefront/demo/token`)).status).toBe(404);
  });
});
