import { execFile } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAIN } from '../../bench/lib/server.js';
import { CONSOLE_DIR } from '../../src/console/routes.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { describeInBrowser, launchBrowser, screenshot, screenshotDir, seriousA11yViolations } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';

// The merchant console (console/README.md) as a person uses it: headless Chromium against
// the real server on a real database, finding every control by its accessible name.

const run = promisify(execFile);

describeInBrowser(`the merchant console in a browser (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let redemptionId: number;
  const shots = screenshotDir();

  const expectAccessible = async (name: string) => {
    expect(await seriousA11yViolations(page), `axe on ${name}`).toEqual([]);
    await screenshot(page, shots, `${TEST_DIALECT}-${name}`);
  };
  const events = async (note: string) =>
    (
      (await t.request('GET', `${API}/customers/1001/points_events`)).json().data as { internal_note: string | null; reversed_by_event_id: number | null }[]
    ).filter((e) => e.internal_note === note);
  const balance = () => page.getByRole('region', { name: 'Balances' }).getByTestId('points-balance');
  const expiries = () => page.getByRole('region', { name: 'Upcoming expiries' });

  // The `it` blocks share one browser page and run in order, as one person's session.
  beforeAll(async () => {
    if (!fs.existsSync(`${CONSOLE_DIR}/index.html`)) throw new Error(`${CONSOLE_DIR} is not built: run npm run build (npm test does it)`);
    // The browser's today is the Overview's: the server's clock is the real one here.
    t = await setup({ now: Date.now(), shop: { points_expiry_days: 365 } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.request('PUT', `${API}/customers/1001`, { body: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' } });
    await t.request('PUT', `${API}/customers/1002`, { body: { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' } });
    await t.request('POST', `${API}/vip_tiers`, { body: { name: 'Gold', points_threshold: 2000 } });
    await t.request('POST', `${API}/points_events`, { body: { customer_identifier: '1001', source: 'order', points_amount: 500 } });
    const reward = (await t.request('POST', `${API}/rewards`, { body: { name: 'Tote bag', points_price: 100, kind: 'free_product', value: 10 } })).json().data;
    const redemption = await t.request('POST', `${API}/redemptions`, { body: { reward_id: reward.id, customer_identifier: '1001' } });
    expect(redemption.statusCode).toBe(201);
    redemptionId = redemption.json().data.id;
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    process.stdout.write(`screenshots of the console (${TEST_DIALECT}): ${shots}\n`);
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('signs in with the "API token" field, shows a wrong token\'s error in words, and keeps the token in sessionStorage only', async () => {
    await page.goto(`${base}/console/`);
    await expectAccessible('sign-in');
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible('sign-in-390px');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByLabel('API token').fill('lty_not_a_real_token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const refusal = await t.request('GET', `${API}/shop`, { token: 'lty_not_a_real_token' });
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(refusal.json().error.message);

    await page.getByLabel('API token').fill(t.token);
    await page.getByLabel('API token').press('Enter');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(await page.evaluate('({ session: Object.values(sessionStorage), local: localStorage.length, cookies: document.cookie })')).toEqual({
      session: [t.token],
      local: 0,
      cookies: '',
    });
  });

  it("lands on the Overview: charts named for what they show, whose data tables hold the reports' figures, over the chosen period", async () => {
    const report = async (days: number) => {
      const to = new Date().toISOString().slice(0, 10);
      const from = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
      return (await t.request('GET', `${API}/reports/points?from=${from}&to=${to}&interval=day`)).json().data as Record<string, number | string>[];
    };
    const flows = page.getByRole('figure', { name: 'Points earned, redeemed and expired per day' });
    await flows.getByRole('img', { name: 'Points earned, redeemed and expired per day' }).waitFor();
    await page.locator('figure[data-drawn]').nth(2).waitFor();
    await flows.getByText('Show the data').click();
    const table = flows.getByRole('region', { name: 'Points earned, redeemed and expired per day' });
    const rows = table.getByRole('row');
    await expect.poll(() => rows.count()).toBe(31);
    const today = (await report(30)).at(-1)!;
    expect(await rows.last().getByRole('cell').allTextContents()).toEqual([today.period_start, '500', '100', '0']);
    await expectAccessible('overview');

    await page.getByLabel('Period').selectOption({ label: 'Last 90 days' });
    await expect.poll(() => rows.count()).toBe(91);
    const outstanding = page.getByRole('figure', { name: 'Outstanding points' });
    await outstanding.getByRole('img', { name: 'Outstanding points' }).waitFor();
    await outstanding.getByText('Show the data').click();
    const ends = outstanding.getByRole('region', { name: 'Outstanding points at the end of each day' }).getByRole('row');
    expect(await ends.count()).toBe(91);
    expect(await ends.nth(1).getByRole('cell').allTextContents()).toEqual([(await report(90))[0]!.period_start, '0']);
    expect(await ends.last().getByRole('cell').last().textContent()).toBe('400');

    const programme = (await t.request('GET', `${API}/reports/programme`)).json().data;
    expect(await page.getByTestId('points-outstanding').textContent()).toBe(String(programme.points_outstanding));
    const tiers = page.getByRole('figure', { name: 'Members by tier' });
    await tiers.getByRole('img', { name: 'Members by tier' }).waitFor();
    await tiers.getByText('Show the data').click();
    const members = tiers.getByRole('region', { name: 'Members by tier' }).getByRole('row');
    expect(await members.nth(1).getByRole('cell').allTextContents()).toEqual(['No tier', '2']);
    expect(await members.nth(2).getByRole('cell').allTextContents()).toEqual(['Gold', '0']);
    await expectAccessible('overview-90-days');
  });

  it('lists customers and finds one by e-mail and by remote_id with "Search customers"', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Customers' }).click();
    await page.getByRole('link', { name: 'Grace Hopper' }).waitFor();
    await expectAccessible('customers');
    // "Points" sorts by balance, ascending first: Grace (0) before Ada (400), which only the sorted answer shows.
    const points = page.getByRole('columnheader', { name: /^Points/ });
    const first = () => page.getByRole('region', { name: 'Customers found' }).getByRole('row').nth(1).getByRole('link').textContent();
    await points.getByRole('button', { name: /^Points/ }).click();
    await expect.poll(first).toBe('Grace Hopper');
    expect(await points.getAttribute('aria-sort')).toBe('ascending');
    await points.getByRole('button', { name: /^Points/ }).click();
    await expect.poll(first).toBe('Ada Lovelace');
    expect(await points.getAttribute('aria-sort')).toBe('descending');
    expect(await page.getByLabel('Sort by').inputValue()).toBe('points_balance');
    await page.getByLabel('Search customers').fill('ADA@example.com');
    await page.getByLabel('Search customers').press('Enter');
    // Ada is on the first page too: wait for Grace to go, which only the search's answer does.
    // The list loads afresh after an erasure: once it shows Ada, it is the answer after it.
    await expect.poll(() => page.getByRole('link', { name: 'Grace Hopper' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    await page.getByRole('cell', { name: 'ada@example.com' }).waitFor();
    await page.getByLabel('Search customers').fill('1002');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Grace Hopper' }).waitFor();
    await page.getByLabel('Search customers').fill('999999');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('status').filter({ hasText: 'No customers found.' }).waitFor();

    await page.getByLabel('Search customers').fill('1001');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Ada Lovelace' }).click();
    await page.getByRole('heading', { name: 'Ada Lovelace', level: 1 }).waitFor();
    expect(await balance().textContent()).toBe('400');
    // Why this balance: the order's lot, less the redemption's 100; it expires in 365 days.
    const order = page.getByRole('region', { name: 'Open lots' }).getByRole('row').filter({ hasText: '(order)' });
    // The lots come in their own request, after the heading: wait for them.
    await expect.poll(async () => (await order.getByRole('cell').allTextContents()).slice(2, 5)).toEqual(['Points', '500', '400']);
    await expect.poll(() => expiries().getByRole('listitem').first().textContent()).toMatch(/^400 points on \d+ \w+ \d{4}$/);
    await expectAccessible('customer');
  });

  it("shows the API's validation error beside the field it names, then adjusts points and shows the balance and the event", async () => {
    const form = page.getByRole('form', { name: 'Adjust points' });
    await form.getByLabel('Points').fill('12.5');
    await form.getByRole('button', { name: 'Adjust points' }).click();
    const points = form.getByLabel('Points');
    await expect.poll(() => points.getAttribute('aria-invalid')).toBe('true');
    const described = await points.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${described}"]`).textContent()).toBe('Points must be a whole number, like 50.');
    await expectAccessible('adjust-points-error');

    await form.getByLabel('Points').fill('120');
    await form.getByLabel('Reason').fill('Goodwill: late parcel');
    await form.getByRole('button', { name: 'Adjust points' }).click();
    await page.getByRole('cell', { name: 'Goodwill: late parcel', exact: true }).waitFor();
    await expect.poll(() => balance().textContent()).toBe('520');
    await page.getByRole('region', { name: 'Open lots' }).getByRole('row').filter({ hasText: 'Goodwill: late parcel' }).waitFor();
    await expect.poll(() => expiries().getByRole('listitem').first().textContent()).toMatch(/^520 points on \d+ \w+ \d{4}$/);
    expect(await points.getAttribute('aria-invalid')).toBeNull();
    expect(await events('Goodwill: late parcel')).toHaveLength(1);
  });

  it('makes one event of a form submitted twice quickly (one Idempotency-Key per submitted form)', async () => {
    const keys: (string | undefined)[] = [];
    const listen = (request: { method(): string; url(): string; headers(): Record<string, string> }) => {
      if (request.method() === 'POST' && request.url().endsWith(`${API}/points_events`)) keys.push(request.headers()['idempotency-key']);
    };
    page.on('request', listen);
    const form = page.getByRole('form', { name: 'Adjust points' });
    await form.getByLabel('Points').fill('30');
    await form.getByLabel('Reason').fill('Twice by mistake');
    // Two submits before the first answer comes back, as a double click or Enter pressed twice does.
    await form.evaluate((element) => {
      const submit = element as unknown as { requestSubmit(): void };
      submit.requestSubmit();
      submit.requestSubmit();
    });
    await page.getByRole('cell', { name: 'Twice by mistake', exact: true }).waitFor();
    page.off('request', listen);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(keys[1]).toBe(keys[0]);
    await expect.poll(() => balance().textContent()).toBe('550');
    expect(await events('Twice by mistake')).toHaveLength(1);
  });

  it('reverses an event after a confirmation (Escape cancels it)', async () => {
    const row = page.getByRole('row').filter({ hasText: 'Twice by mistake' });
    await row.getByRole('button', { name: 'Reverse' }).click();
    const dialog = page.getByRole('dialog', { name: /^Reverse event \d+\?$/ });
    await dialog.waitFor();
    await expectAccessible('reverse-confirmation');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect((await events('Twice by mistake'))[0]!.reversed_by_event_id).toBeNull();

    await row.getByRole('button', { name: 'Reverse' }).click();
    await dialog.getByRole('button', { name: 'Reverse event' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect.poll(() => balance().textContent()).toBe('520');
    await page.getByText(/^Reversed by event \d+$/).waitFor();
    expect((await events('Twice by mistake'))[0]!.reversed_by_event_id).toEqual(expect.any(Number));
  });

  it('voids a redemption after a confirmation, by keyboard alone, and its points come back', async () => {
    const row = page.getByRole('region', { name: 'Redemptions' }).getByRole('row').filter({ hasText: 'Tote bag' });
    await row.getByRole('button', { name: 'Void' }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: /^Void .+\?$/ });
    await dialog.waitFor();
    // The dialog takes the focus, on its safe choice first.
    expect(
      await dialog
        .getByRole('button', { name: 'Cancel' })
        .evaluate((button) => button === (button.ownerDocument as unknown as { activeElement: unknown }).activeElement),
    ).toBe(true);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    await row.getByRole('cell', { name: 'Voided', exact: true }).waitFor();
    expect(await row.getByRole('button', { name: 'Void' }).count()).toBe(0);
    await expect.poll(() => balance().textContent()).toBe('620');
    expect((await t.request('GET', `${API}/redemptions/${redemptionId}`)).json().data.status).toBe('voided');
    await expectAccessible('customer-after-void');
  });

  it("downloads the customer's JSON export after a confirmation", async () => {
    await page.getByRole('button', { name: "Export Ada Lovelace's data", exact: true }).click();
    const dialog = page.getByRole('dialog', { name: "Export Ada Lovelace's data?" });
    await dialog.waitFor();
    await expectAccessible('export-confirmation');
    const [download] = await Promise.all([page.waitForEvent('download'), dialog.getByRole('button', { name: 'Download export' }).click()]);
    await dialog.waitFor({ state: 'hidden' });
    expect(download.suggestedFilename()).toBe('customer-1001.json');
    const file = JSON.parse(fs.readFileSync((await download.path())!, 'utf8'));
    const api = (await t.request('GET', `${API}/customers/1001/export`)).json();
    expect(file.data.customer).toEqual(api.data.customer);
    expect(file.data.points_events).toEqual(api.data.points_events);
    expect(file.data.points_events.map((e: { internal_note: string | null }) => e.internal_note)).toContain('Goodwill: late parcel');
  });

  it('fits a 390 px wide screen: nothing wider than the window but the tables, which scroll', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible('customer-390px');
    await page.getByRole('link', { name: 'Back to customers' }).click();
    await page.getByRole('heading', { name: 'Customers', level: 1 }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible('customers-390px');
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('figure[data-drawn]').nth(2).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await expectAccessible('overview-390px');
  });

  it('erases a customer after a confirmation, then shows the list with a message', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.evaluate("location.hash = '#/customers/1002'");
    await page.getByRole('heading', { name: 'Grace Hopper', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Erase Grace Hopper', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Erase Grace Hopper?' });
    await dialog.getByRole('button', { name: 'Erase customer' }).click();
    await page.getByRole('heading', { name: 'Customers', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Grace Hopper was erased' }).waitFor();
    // The list loads afresh after an erasure: once it shows Ada, it is the answer after it.
    await page.getByRole('link', { name: 'Ada Lovelace' }).waitFor();
    expect(await page.getByRole('link', { name: 'Grace Hopper' }).count()).toBe(0);
    expect((await t.request('GET', `${API}/customers/1002`)).statusCode).toBe(404);
    await expectAccessible('customers-after-erasure');
  });

  it('signs in from the URL `loyalty console-link` prints, and takes the token out of the address', async () => {
    const { stdout } = await run(process.execPath, [MAIN, 'console-link', '--shop', String(t.shop.id), '--url', base], {
      env: { ...process.env, DATABASE_URL: t.url, LOG_LEVEL: 'silent' },
    });
    const url = /^http\S+#token=\S+$/m.exec(stdout)?.[0];
    expect(url, stdout).toBeDefined();
    const fresh = await context.browser()!.newContext();
    const linked = await fresh.newPage();
    await linked.goto(url!);
    await linked.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    expect(linked.url()).toBe(`${base}/console/#/`);
    await fresh.close();
  });
});
