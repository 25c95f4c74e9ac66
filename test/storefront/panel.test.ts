import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PANEL_BUNDLE } from '../../src/storefront/panel-routes.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postEvent } from '../ledger/fixtures.js';
import { describeInBrowser, launchBrowser } from '../helpers/browser.js';
import { createKey, customerToken, type TestKey } from './fixtures.js';

// <loyalty-panel> as a shopper uses it: in headless Chromium (Debian's package, driven by
// playwright-core), on a page of another origin than the API, found by the accessible names of
// its controls. Without a browser the test says so and is skipped; LOYALTY_REQUIRE_BROWSER=1
// (CI) makes a missing browser a failure.

const MAX_GZIPPED_BYTES = 25 * 1024;

describe('the panel bundle', () => {
  it(`is built, and at most ${MAX_GZIPPED_BYTES / 1024} KB gzipped`, () => {
    expect(fs.existsSync(PANEL_BUNDLE), `${PANEL_BUNDLE}: run npm run build`).toBe(true);
    expect(gzipSync(fs.readFileSync(PANEL_BUNDLE)).length).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
  });
});

describeInBrowser(`<loyalty-panel> in Chromium (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let key: TestKey;
  let apiBase: string;
  let host: http.Server;
  let hostBase: string;
  let tokenFetches = 0;
  let expired: string;

  beforeAll(async () => {
    t = await setup();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    apiBase = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await createCustomers(t, 1);
    expect((await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1200, internal_note: 'secret note' })).statusCode).toBe(201);
    for (const reward of [
      { name: '5 € off', points_price: 500 },
      { name: 'Free tote bag', points_price: 5000 },
    ]) {
      expect((await t.request('POST', `${API}/rewards`, { body: { kind: 'free_shipping', ...reward } })).statusCode).toBe(201);
    }

    // The merchant's page, on another origin: it signs tokens with the key's secret (token-url).
    host = http.createServer((req, res) => {
      if (req.url === '/token') {
        tokenFetches++;
        void customerToken(t, key).then((token) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token })));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><title>Shop</title><body>
        <loyalty-panel api-base="${apiBase}" publishable-key="${key.publishable_key}" token="${expired}" token-url="/token"></loyalty-panel>
        <script type="module" src="${apiBase}/storefront/loyalty.js"></script></body></html>`);
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostBase = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    key = await createKey(t, [hostBase]);
    // Expired a minute and a half ago (past the 60 s of skew allowed).
    expired = await customerToken(t, key, { iat: -3600, exp: -90 });
  });
  afterAll(async () => {
    host?.close();
    await t?.close();
  });

  it('shows the balance, redeems an affordable reward, shows its code, and the balance drops; an expired token is refreshed once', async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext({ locale: 'en-US' })).newPage();
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(error.message));
      await page.goto(`${hostBase}/`);
      const panel = page.locator('loyalty-panel');
      await expect.poll(() => panel.locator('[part=balance]').textContent(), { timeout: 15_000 }).toBe('1,200 points');
      expect(tokenFetches).toBe(1);

      const cheap = panel.getByRole('button', { name: 'Redeem 5 € off' });
      const dear = panel.getByRole('button', { name: 'Redeem Free tote bag' });
      expect(await cheap.isEnabled()).toBe(true);
      expect(await dear.isDisabled()).toBe(true);
      await expect.poll(() => panel.getByText('3,800 points more needed', { exact: false }).count()).toBe(1);

      await cheap.click();
      const code = panel.locator('[part=code]');
      await expect.poll(() => code.textContent(), { timeout: 15_000 }).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{12}$/);
      await expect.poll(() => panel.locator('[part=balance]').textContent()).toBe('700 points');
      expect(await panel.getByRole('button', { name: 'Copy' }).isVisible()).toBe(true);
      expect(await panel.getByRole('alert').textContent()).toBe('');
      expect(await page.content()).not.toContain('secret note');
      expect(failures).toEqual([]);

      const redemptions = (await t.request('GET', `${API}/redemptions`)).json().data;
      expect(redemptions).toHaveLength(1);
      expect(redemptions[0].code).toBe(await code.textContent());
      expect(tokenFetches).toBe(1);
    } finally {
      await browser.close();
    }
    await expectConsistentLedger(t);
  });
});
