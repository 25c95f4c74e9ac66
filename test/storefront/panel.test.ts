import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSLATIONS } from '../../panel/src/i18n/index.js';
import { PANEL_BUNDLE } from '../../src/storefront/panel-routes.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, expectConsistentLedger, postEvent } from '../ledger/fixtures.js';
import { describeInBrowser, launchBrowser, screenshot, screenshotDir, seriousA11yViolations } from '../helpers/browser.js';
import { createKey, customerToken, type TestKey } from './fixtures.js';

// <loyalty-panel> as a shopper uses it: in headless Chromium (Debian's package, driven by
// playwright-core), on a page of another origin than the API, found by the accessible names of
// its controls, checked with axe at a desktop and a phone width. Without a browser the test
// says so and is skipped; LOYALTY_REQUIRE_BROWSER=1 (CI) makes a missing browser a failure.

const MAX_GZIPPED_BYTES = 25 * 1024;
const DAY_MS = 86_400_000;

describe('the panel bundle', () => {
  it(`is built, with all ${Object.keys(TRANSLATIONS).length} languages, and at most ${MAX_GZIPPED_BYTES / 1024} KB gzipped`, () => {
    expect(fs.existsSync(PANEL_BUNDLE), `${PANEL_BUNDLE}: run npm run build`).toBe(true);
    const bundle = fs.readFileSync(PANEL_BUNDLE);
    expect(Object.keys(TRANSLATIONS)).toEqual(expect.arrayContaining(['en', 'de', 'fr', 'es', 'it', 'nl']));
    for (const table of Object.values(TRANSLATIONS)) {
      expect(Object.keys(table).sort()).toEqual(Object.keys(TRANSLATIONS.en!).sort());
      expect(bundle.toString('utf8')).toContain(table.history);
    }
    expect(gzipSync(bundle).length).toBeLessThanOrEqual(MAX_GZIPPED_BYTES);
  });
});

/** The panel's own width is its box: nothing in it may reach past it (a phone's 390 px included). */
async function overflowing(panel: Locator): Promise<string[]> {
  return panel.evaluate((host) => {
    const box = host.getBoundingClientRect();
    return [...host.shadowRoot!.querySelectorAll('*')]
      .filter((el) => el.tagName !== 'STYLE' && el.tagName !== 'DIALOG' && !el.closest('dialog'))
      .filter((el) => {
        const r = el.getBoundingClientRect();
        return r.width > 0 && (r.right > box.right + 0.5 || r.left < box.left - 0.5);
      })
      .map((el) => `${el.tagName}: ${(el.textContent ?? '').slice(0, 40)}`);
  });
}

describeInBrowser(`<loyalty-panel> in Chromium (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let key: TestKey;
  let apiBase: string;
  let host: http.Server;
  let hostBase: string;
  let tokenFetches = 0;
  let expired: string;
  let browser: Browser;
  const shots = screenshotDir();

  beforeAll(async () => {
    // The browser's clock and the server's agree: a code's expiry is judged by both. The order
    // rule has no currency of its own: the panel says the shop's.
    t = await setup({ now: Date.now(), shop: { currency: 'EUR' } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    apiBase = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const now = t.clock.now;
    const writes: [string, unknown][] = [
      ['rewards', { kind: 'fixed_amount_discount', value: 5, name: '5 € off', points_price: 500, code_valid_days: 30 }],
      ['rewards', { kind: 'free_product', value: 12, name: 'Free tote bag', points_price: 5000 }],
      ['earning_rules', { kind: 'order', points_per_unit: 1, unit_amount: 1 }],
      ['earning_rules', { kind: 'birthday', points_amount: 100 }],
      ['earning_rules', { kind: 'referral_referrer', points_amount: 200 }],
      ['vip_tiers', { name: 'Silver', points_threshold: 0 }],
      ['vip_tiers', { name: 'Gold', points_threshold: 1000, earning_multiplier: 1.5 }],
      [
        'campaigns',
        { name: 'Black Friday', bonus_points: 50, starts_at: new Date(now - DAY_MS).toISOString(), ends_at: new Date(now + 3 * DAY_MS).toISOString() },
      ],
    ];
    for (const [path, body] of writes) {
      const res = await t.request('POST', `${API}/${path}`, { body });
      expect(res.statusCode, res.body).toBe(201);
    }
    await createCustomers(t, 1);
    const grant = await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 10, internal_note: 'secret note' });
    expect((await t.request('POST', `${API}/points_events/${grant.json().data.id}/reverse`, { body: {} })).statusCode).toBe(201);
    expect((await postEvent(t, { customer_identifier: '1', source: 'manual', points_amount: 1200 })).statusCode).toBe(201);

    // The merchant's page, on another origin: it signs tokens with the key's secret (token-url).
    // ?html= sets the page's language, ?lang= the element's, ?strings= the merchant's own words.
    host = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://host');
      if (url.pathname === '/token') {
        tokenFetches++;
        void customerToken(t, key).then((token) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token })));
        return;
      }
      const lang = url.searchParams.get('lang');
      const strings = url.searchParams.get('strings');
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="${url.searchParams.get('html') ?? 'en'}">
        <meta name="viewport" content="width=device-width, initial-scale=1"><title>Shop</title><body><main><h1>Shop</h1>
        <loyalty-panel api-base="${apiBase}" publishable-key="${key.publishable_key}" token="${expired}" token-url="/token"${lang ? ` lang="${lang}"` : ''}${
          strings ? ` strings='${strings}'` : ''
        } referral-url="https://shop.example/r/{code}"></loyalty-panel></main>
        <script type="module" src="${apiBase}/storefront/loyalty.js"></script></body></html>`);
    });
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostBase = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    key = await createKey(t, [hostBase]);
    // Expired a minute and a half ago (past the 60 s of skew allowed).
    expired = await customerToken(t, key, { iat: -3600, exp: -90 });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    host?.close();
    await t?.close();
  });

  async function open(page: Page, query = ''): Promise<Locator> {
    await page.goto(`${hostBase}/${query}`);
    const panel = page.locator('loyalty-panel');
    await expect.poll(() => panel.locator('[part=balance]').count(), { timeout: 15_000 }).toBe(1);
    return panel;
  }

  it('shows the programme as a shopper reads it, confirms before spending, keeps the code after a reload, takes a birthday, shares a referral link', async () => {
    const context = await browser.newContext({ locale: 'en-US', viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: hostBase });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    const panel = await open(page);
    expect(await panel.locator('[part=balance]').textContent()).toBe('1,200 points');
    expect(tokenFetches).toBe(1);

    // Beside Smile or LoyaltyLion: the running campaign, earning with its currency, tiers and what they give.
    expect(await panel.getByRole('region', { name: 'Offers' }).textContent()).toMatch(/Black Friday\s*50 points extra on every order · until /);
    expect(await panel.getByRole('region', { name: 'Ways to earn' }).textContent()).toContain('1 point per €1.00 spent');
    const tiers = panel.getByRole('region', { name: 'Member tiers' });
    expect(await tiers.getByRole('listitem').nth(1).textContent()).toMatch(/Gold\s*Your tier\s*From 1,000 points · 1.5× points on orders/);
    // The history in words: no source's internal name, no internal note.
    const history = await panel.getByRole('region', { name: 'History' }).textContent();
    expect(history).toContain('Points from the shop');
    expect(history).toContain('Points taken back');
    expect(history).not.toMatch(/manual|reversal|_|secret note/);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await seriousA11yViolations(page), `axe at ${width} px`).toEqual([]);
      await screenshot(page, shots, `${TEST_DIALECT}-panel-${width}`);
      expect(await overflowing(panel), `overflow at ${width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });

    // A redemption is confirmed first: cancelling spends nothing.
    const cheap = panel.getByRole('button', { name: 'Redeem 5 € off' });
    expect(await panel.getByRole('button', { name: 'Redeem Free tote bag' }).isDisabled()).toBe(true);
    expect(await panel.getByText('3,800 points more needed', { exact: false }).count()).toBe(1);
    await cheap.click();
    const dialog = panel.getByRole('dialog', { name: 'Redeem 5 € off?' });
    expect(await dialog.textContent()).toContain('This spends 500 points. You will have 700 points left.');
    expect(await seriousA11yViolations(page), 'axe with the confirmation open').toEqual([]);
    await screenshot(page, shots, `${TEST_DIALECT}-panel-confirm`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    // Escape cancels too, and the focus goes back to the reward's button.
    await cheap.click();
    await expect.poll(() => dialog.count()).toBe(1);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    expect(await panel.evaluate((el) => el.shadowRoot!.activeElement?.getAttribute('aria-label'))).toBe('Redeem 5 € off');
    expect((await t.request('GET', `${API}/redemptions`)).json().data).toEqual([]);
    await cheap.click();
    await panel.getByRole('dialog', { name: 'Redeem 5 € off?' }).getByRole('button', { name: 'Spend 500 points' }).click();

    // The code, with its expiry (30 days) and how to use it.
    const fresh = panel.getByRole('region', { name: 'Your code for 5 € off' });
    const code = fresh.locator('[part=code]');
    await expect.poll(() => code.textContent(), { timeout: 15_000 }).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{12}$/);
    const validUntil = new Date(t.clock.now + 30 * DAY_MS).toLocaleDateString('en-US', { year: 'numeric', month: 'short', day: 'numeric' });
    expect(await fresh.textContent()).toContain(`Valid until ${validUntil}`);
    expect(await fresh.textContent()).toContain('Enter this code in the discount code field at checkout.');
    await expect.poll(() => panel.locator('[part=balance]').textContent()).toBe('700 points');
    const redemptions = (await t.request('GET', `${API}/redemptions`)).json().data;
    expect(redemptions).toHaveLength(1);
    expect(redemptions[0].code).toBe(await code.textContent());
    await fresh.getByRole('button', { name: 'Copy the code for 5 € off' }).click();
    await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(redemptions[0].code);

    // After a reload the code is still there, among the shopper's codes.
    const reloaded = await open(page);
    const codes = reloaded.getByRole('region', { name: 'Your codes' });
    expect(await codes.textContent()).toContain(redemptions[0].code);
    expect(await codes.textContent()).toContain(`Valid until ${validUntil}`);
    expect(await codes.getByRole('button', { name: 'Copy the code for 5 € off' }).isVisible()).toBe(true);
    await page.setViewportSize({ width: 390, height: 900 });
    expect(await seriousA11yViolations(page), 'axe at 390 px with codes').toEqual([]);
    await screenshot(page, shots, `${TEST_DIALECT}-panel-codes-390`);
    expect(await overflowing(reloaded), 'overflow at 390 px with codes').toEqual([]);

    // The birthday, told once.
    const birthday = reloaded.getByRole('region', { name: 'Your birthday' });
    expect(await birthday.textContent()).toContain('Tell us your birthday and get 100 points on the day.');
    await birthday.getByLabel('Your birthday').fill('1990-03-14');
    await birthday.getByRole('button', { name: 'Save birthday' }).click();
    await expect.poll(() => birthday.textContent()).toContain('Your birthday: March 14');
    expect((await t.request('GET', `${API}/customers/1`)).json().data.birthday).toBe('1990-03-14');

    // The referral code with a link to share and a button that copies it.
    const refer = reloaded.getByRole('region', { name: 'Refer a friend' });
    const referralCode = (await t.request('GET', `${API}/customers/1`)).json().data.referral_code;
    const link = `https://shop.example/r/${referralCode}`;
    expect(await refer.getByRole('link', { name: link }).getAttribute('href')).toBe(link);
    expect(await refer.textContent()).toContain('When a friend you refer places their first order, you get 200 points.');
    await refer.getByRole('button', { name: 'Copy link' }).click();
    await expect.poll(() => refer.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(link);
    expect(await page.content()).not.toContain('secret note');
    expect(failures).toEqual([]);
    await context.close();
    await expectConsistentLedger(t);
    // A busy machine runs Chromium slowly: the whole visit, axe four times, in at most 3 minutes.
  }, 180_000);

  it("speaks the page's language, or the element's, through Intl; the merchant's strings win", async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const balance: number = (await t.request('GET', `${API}/customers/1`)).json().data.points_balance;
    for (const lang of ['de', 'fr', 'es', 'it', 'nl']) {
      const panel = await open(page, `?html=${lang}`);
      const words = TRANSLATIONS[lang]!;
      const n = new Intl.NumberFormat(lang).format(balance);
      expect(await panel.locator('[part=balance]').textContent(), lang).toBe(words.points.split('|')[1]!.replace('{n}', n));
      expect(await panel.getByRole('heading', { name: words.rewards }).count(), lang).toBe(1);
      const euro = new Intl.NumberFormat(lang, { style: 'currency', currency: 'EUR' }).format(1);
      expect(await panel.getByRole('region', { name: words.earn }).textContent(), lang).toContain(euro);
      expect(await panel.getByRole('button', { name: words.redeem_label.replace('{name}', '5 € off') }).count(), lang).toBe(1);
    }
    // The element's lang wins over the page's, and the merchant may replace any string.
    const panel = await open(page, `?html=de&lang=fr&strings=${encodeURIComponent(JSON.stringify({ rewards: 'Cadeaux' }))}`);
    expect(await panel.getByRole('heading', { name: 'Cadeaux' }).count()).toBe(1);
    expect(await panel.getByRole('heading', { name: 'Historique' }).count()).toBe(1);
    expect(await panel.locator('[part=balance]').textContent()).toBe(`${new Intl.NumberFormat('fr').format(balance)} points`);
    // And the property: the words change at once, without reading the account again.
    await panel.evaluate((el) => ((el as unknown as { strings: Record<string, string> }).strings = { history: 'Vos points' }));
    expect(await panel.getByRole('heading', { name: 'Vos points' }).count()).toBe(1);
    await context.close();
  }, 120_000);
});
