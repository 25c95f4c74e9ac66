import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { describeInBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { openConsole, type ConsoleSession } from './session.js';

// The console's Programme pages (console/README.md): earning rules, rewards with code upload,
// VIP tiers and the shop's settings, each control found by its accessible name.

describeInBrowser(`the console's programme pages (${TEST_DIALECT})`, () => {
  let s: ConsoleSession;
  let page: Page;
  const list = async (path: string) => (await s.t.request('GET', `${API}/${path}`)).json().data as Record<string, unknown>[];

  beforeAll(async () => {
    s = await openConsole();
    page = s.page;
  });
  afterAll(async () => {
    await s?.close();
  });

  it("creates an earning rule, with the API's error beside the field it names", async () => {
    await s.open('#/programme', 'Earning rules');
    await page.getByRole('status').filter({ hasText: 'No earning rules yet' }).waitFor();
    await s.expectAccessible('earning-rules-empty');
    const form = page.getByRole('form', { name: 'New earning rule' });
    await form.getByLabel('Kind').selectOption('order');
    await form.getByLabel('Unit amount').fill('1');
    await form.getByRole('button', { name: 'Create earning rule' }).click();
    expect(await s.fieldError(form.getByLabel('Points per unit'))).toMatch(/^Points per unit is required/);
    await s.expectAccessible('earning-rule-error');

    await form.getByLabel('Points per unit').fill('2');
    await form.getByLabel('Currency').fill('EUR');
    await form.getByRole('button', { name: 'Create earning rule' }).click();
    await page.getByRole('cell', { name: '2 per 1.00 EUR' }).waitFor();
    expect(await form.getByLabel('Points per unit').getAttribute('aria-invalid')).toBeNull();
    expect(await list('earning_rules')).toMatchObject([{ kind: 'order', points_per_unit: 2, unit_amount: 1, currency: 'EUR', enabled: true }]);
  });

  it('disables and enables a rule, and edits it in a dialog', async () => {
    const row = page.getByRole('region', { name: 'Earning rules' }).getByRole('row').filter({ hasText: '2 per 1.00 EUR' });
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByRole('button', { name: 'Enable' }).waitFor();
    expect(await row.getByRole('cell', { name: 'No', exact: true }).count()).toBe(1);
    expect((await list('earning_rules'))[0]).toMatchObject({ enabled: false });
    await row.getByRole('button', { name: 'Enable' }).click();
    await row.getByRole('button', { name: 'Disable' }).waitFor();
    expect((await list('earning_rules'))[0]).toMatchObject({ enabled: true });

    await row.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: /^Edit earning rule \d+$/ });
    await dialog.waitFor();
    await s.expectAccessible('earning-rule-edit');
    await dialog.getByLabel('Points per unit').fill('3');
    await dialog.getByLabel('Currency').fill('');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('cell', { name: '3 per 1.00', exact: true }).waitFor();
    expect((await list('earning_rules'))[0]).toMatchObject({ points_per_unit: 3, currency: null });
  });

  it('deletes a rule after a confirmation', async () => {
    const row = page.getByRole('region', { name: 'Earning rules' }).getByRole('row').filter({ hasText: '3 per 1.00' });
    await row.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: /^Delete earning rule \d+\?$/ });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await list('earning_rules')).toHaveLength(1);
    await row.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete earning rule' }).click();
    await page.getByRole('status').filter({ hasText: 'No earning rules yet' }).waitFor();
    expect(await list('earning_rules')).toHaveLength(0);
  });

  it('creates a way to earn with its limit in words', async () => {
    const form = page.getByRole('form', { name: 'New earning rule' });
    await form.getByLabel('Kind').selectOption('custom_action');
    await form.getByLabel('Action name').fill('newsletter');
    await form.getByLabel('Points', { exact: true }).fill('50');
    await form.getByLabel('Times allowed').fill('2');
    await form.getByLabel('Per period').selectOption('day');
    await form.getByLabel('Shoppers may claim it').check();
    await form.getByRole('button', { name: 'Create earning rule' }).click();
    await page.getByRole('cell', { name: 'twice a day' }).waitFor();
    await s.expectAccessible('way-to-earn');
    expect(await list('earning_rules')).toMatchObject([{ kind: 'custom_action', name: 'newsletter', limit_count: 2, limit_period: 'day', claimable: true }]);
  });

  it('creates a reward once from a form sent twice, and pages through the rewards in cursor mode', async () => {
    for (let i = 1; i <= 25; i++) {
      const res = await s.t.request('POST', `${API}/rewards`, { body: { name: `Seeded ${i}`, points_price: 100 + i, kind: 'free_shipping' } });
      expect(res.statusCode).toBe(201);
    }
    await s.open('#/programme/rewards', 'Rewards');
    await page.getByRole('cell', { name: 'Seeded 25', exact: true }).waitFor();
    const form = page.getByRole('form', { name: 'New reward' });
    await form.getByLabel('Name').fill('Tote bag');
    await form.getByLabel('Points price').fill('abc');
    await form.getByRole('button', { name: 'Create reward' }).click();
    expect(await s.fieldError(form.getByLabel('Points price'))).toMatch(/^Points price /);
    await form.getByLabel('Points price').fill('300');
    await form.getByLabel('Kind').selectOption('free_product');
    await form.getByLabel('Value').fill('12.50');
    await form.evaluate((element) => {
      const submit = element as unknown as { requestSubmit(): void };
      submit.requestSubmit();
      submit.requestSubmit();
    });
    await form
      .getByRole('status')
      .filter({ hasText: /^Reward \d+ created\.$/ })
      .waitFor();
    const all = await s.t.request('GET', `${API}/rewards`, { query: { 'pagination[limit]': '250' } });
    expect(all.json().data.filter((r: { name: string }) => r.name === 'Tote bag')).toHaveLength(1);

    await page.getByRole('navigation', { name: 'Pages of rewards' }).getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('cell', { name: 'Tote bag', exact: true }).waitFor();
    expect(await page.getByRole('cell', { name: 'Seeded 1', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await s.expectAccessible('rewards-page-2');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByRole('cell', { name: 'Seeded 1', exact: true }).waitFor();
  });

  it('uploads codes from a file, says how many were added, and refuses a file with clashes line by line', async () => {
    await page.getByRole('button', { name: 'Next page' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Tote bag' });
    await row.getByRole('button', { name: 'Upload codes' }).click();
    const dialog = page.getByRole('dialog', { name: 'Upload codes for Tote bag' });
    await dialog
      .getByLabel('Codes file')
      .setInputFiles({ name: 'codes.txt', mimeType: 'text/plain', buffer: Buffer.from('TOTE-0001\nTOTE-0002\n\nTOTE-0003\n') });
    await dialog.getByRole('button', { name: 'Upload codes' }).click();
    await dialog.getByRole('status').filter({ hasText: 'Added 3 codes: 3 available, 0 issued.' }).waitFor();
    await s.expectAccessible('upload-codes');

    await dialog.getByLabel('Codes file').setInputFiles({ name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from('TOTE-0004\nTOTE-0002\nTOTE-0004\n') });
    await dialog.getByRole('button', { name: 'Upload codes' }).click();
    const errors = dialog.getByRole('list', { name: 'Errors by line' });
    await errors.waitFor();
    expect(await errors.getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(/^Line 2: .*TOTE-0002/),
      expect.stringMatching(/^Line 3: .*twice/),
    ]);
    const id = (await list('rewards?pagination[since_id]=25')).find((r) => r.name === 'Tote bag')!.id;
    expect((await s.t.request('GET', `${API}/rewards/${id}/codes`)).json().data).toMatchObject({ available: 3, issued: 0 });
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  it('creates and edits a VIP tier, with a clash beside the field', async () => {
    await s.open('#/programme/vip-tiers', 'VIP tiers');
    await page.getByRole('status').filter({ hasText: 'No VIP tiers yet' }).waitFor();
    const form = page.getByRole('form', { name: 'New VIP tier' });
    await form.getByLabel('Name').fill('Gold');
    await form.getByLabel('Points threshold').fill('1000');
    await form.getByLabel('Earning multiplier').fill('1.5');
    await form.getByRole('button', { name: 'Create VIP tier' }).click();
    await page.getByRole('cell', { name: 'Gold', exact: true }).waitFor();
    await form.getByLabel('Name').fill('Silver');
    await form.getByLabel('Points threshold').fill('1000');
    await form.getByRole('button', { name: 'Create VIP tier' }).click();
    expect(await s.fieldError(form.getByLabel('Points threshold'))).toMatch(/points_threshold|threshold/i);
    await s.expectAccessible('vip-tiers');

    await page.getByRole('row').filter({ hasText: 'Gold' }).getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: /^Edit VIP tier \d+$/ });
    await dialog.getByLabel('Points threshold').fill('1500');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('cell', { name: '1,500' }).waitFor();
    expect(await list('vip_tiers')).toMatchObject([{ name: 'Gold', points_threshold: 1500, earning_multiplier: 1.5 }]);
    await s.expectFitsPhone('vip-tiers');
  });

  it('creates a campaign for a tier, edits it, and cancels it after a confirmation', async () => {
    await s.open('#/programme/campaigns', 'Campaigns');
    await page.getByRole('status').filter({ hasText: 'No campaigns yet' }).waitFor();
    await s.expectAccessible('campaigns-empty');
    const form = page.getByRole('form', { name: 'New campaign' });
    await form.getByLabel('Name').fill('Double points');
    // The server's clock is 2026-01-15 12:00 UTC.
    await form.getByLabel('Starts at (UTC)').fill('2026-01-10T00:00');
    await form.getByLabel('Ends at (UTC)').fill('2026-01-05T00:00');
    await form.getByLabel('Multiplier').fill('2');
    await form.getByRole('group', { name: 'For VIP tiers (none: everyone)' }).getByRole('checkbox', { name: 'Gold' }).check();
    await form.getByRole('button', { name: 'Create campaign' }).click();
    expect(await s.fieldError(form.getByLabel('Ends at (UTC)'))).toMatch(/Ends at \(UTC\) must be after Starts at \(UTC\)/);
    await s.expectAccessible('campaign-error');

    await form.getByLabel('Ends at (UTC)').fill('2026-02-01T00:00');
    await form.getByRole('button', { name: 'Create campaign' }).click();
    const row = page.getByRole('region', { name: 'Campaigns' }).getByRole('row').filter({ hasText: 'Double points' });
    await row.getByRole('cell', { name: 'Running', exact: true }).waitFor();
    expect(await row.getByRole('cell', { name: 'Gold', exact: true }).count()).toBe(1);
    const gold = (await list('vip_tiers'))[0]!.id;
    expect(await list('campaigns')).toMatchObject([
      {
        name: 'Double points',
        starts_at: expect.stringMatching(/^2026-01-10T00:00:00/),
        multiplier: 2,
        bonus_points: null,
        vip_tier_ids: [gold],
        status: 'active',
      },
    ]);

    await row.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: /^Edit campaign \d+$/ });
    expect(await dialog.getByLabel('Ends at (UTC)').inputValue()).toBe('2026-02-01T00:00');
    await dialog.getByLabel('Bonus points').fill('50');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await row.getByRole('cell', { name: '× 2.00 + 50 points' }).waitFor();
    expect((await list('campaigns'))[0]).toMatchObject({ bonus_points: 50, multiplier: 2, status: 'active' });

    await row.getByRole('button', { name: 'Cancel campaign' }).click();
    const confirm = page.getByRole('dialog', { name: /^Cancel campaign \d+\?$/ });
    await s.expectAccessible('campaign-cancel');
    await confirm.getByRole('button', { name: 'Cancel', exact: true }).click();
    await confirm.waitFor({ state: 'hidden' });
    expect((await list('campaigns'))[0]).toMatchObject({ status: 'active' });
    await row.getByRole('button', { name: 'Cancel campaign' }).click();
    await confirm.getByRole('button', { name: 'Cancel the campaign' }).click();
    await row.getByRole('cell', { name: 'Cancelled', exact: true }).waitFor();
    expect(await row.getByRole('button', { name: 'Cancel campaign' }).count()).toBe(0);
    expect((await list('campaigns'))[0]).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(String) });
    await s.expectFitsPhone('campaigns');
  });

  it("changes the shop's settings, with a bad time zone's error beside it", async () => {
    await s.open('#/programme/settings', 'Shop settings');
    const form = page.getByRole('form', { name: 'Shop settings' });
    await form.getByLabel('Time zone').fill('Mars/Olympus');
    await form.getByRole('button', { name: 'Save settings' }).click();
    expect(await s.fieldError(form.getByLabel('Time zone'))).toMatch(/IANA/);
    await form.getByLabel('Shop name').fill('Acme Coffee');
    await form.getByLabel('Time zone').fill('Europe/Berlin');
    await form.getByLabel('Points expire after (days)').fill('365');
    await form.getByLabel('VIP tier window').selectOption('calendar_year');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    // The console's header names the shop as saved.
    await page.getByRole('banner').getByText('Acme Coffee', { exact: true }).waitFor();
    expect((await s.t.request('GET', `${API}/shop`)).json().data).toMatchObject({
      name: 'Acme Coffee',
      timezone: 'Europe/Berlin',
      points_expiry_days: 365,
      vip_tier_window: 'calendar_year',
    });
    await s.expectAccessible('shop-settings');

    await form.getByLabel('Points expire after (days)').fill('');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await s.t.request('GET', `${API}/shop`)).json().data.points_expiry_days).toBeNull();
    await s.expectFitsPhone('shop-settings');
  });

  it('saves the expiry, reminder, tier and refund settings, and reads them back', async () => {
    const form = page.getByRole('form', { name: 'Shop settings' });
    await form.getByLabel('Points expire', { exact: true }).selectOption('inactivity');
    await form.getByRole('button', { name: 'Save settings' }).click();
    expect(await s.fieldError(form.getByLabel('Inactivity period (days)'))).toMatch(/Inactivity period \(days\) is required/);

    await form.getByLabel('Inactivity period (days)').fill('365');
    await form.getByLabel('Expiry reminders (days before)').fill('30, 7');
    await form.getByLabel('Currency').fill('EUR');
    await form.getByLabel('VIP tier metric').selectOption('amount_spent');
    await form.getByLabel('Keep a tier after a drop (days)').fill('90');
    await form.getByLabel('A refunded order gives back the points of the reward it used').uncheck();
    await form.getByRole('button', { name: 'Save settings' }).click();
    await form.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    expect((await s.t.request('GET', `${API}/shop`)).json().data).toMatchObject({
      points_expiry_mode: 'inactivity',
      points_inactivity_days: 365,
      expiry_reminder_days: [30, 7],
      currency: 'EUR',
      vip_tier_metric: 'amount_spent',
      vip_tier_retention_days: 90,
      restore_redeemed_points_on_refund: false,
    });

    // Read back: a reload signs in again and reads the shop afresh.
    await page.reload();
    await s.open('#/programme/settings', 'Shop settings');
    const values = async () =>
      Promise.all(
        ['Inactivity period (days)', 'Expiry reminders (days before)', 'Currency', 'VIP tier metric', 'Keep a tier after a drop (days)'].map((label) =>
          form.getByLabel(label).inputValue(),
        ),
      );
    expect(await values()).toEqual(['365', '30, 7', 'EUR', 'amount_spent', '90']);
    expect(await form.getByLabel('Points expire', { exact: true }).inputValue()).toBe('inactivity');
    expect(await form.getByLabel('A refunded order gives back the points of the reward it used').isChecked()).toBe(false);
    await s.expectAccessible('shop-settings-expiry');
  });

  it('fits a 390 px wide screen on the rules and rewards pages', async () => {
    await s.open('#/programme/rewards', 'Rewards');
    await page.getByRole('cell', { name: 'Seeded 1', exact: true }).waitFor();
    await s.expectFitsPhone('rewards');
    await s.open('#/programme/earning-rules', 'Earning rules');
    await s.expectFitsPhone('earning-rules');
  });
});
