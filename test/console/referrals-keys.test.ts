import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { describeInBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { openConsole, type ConsoleSession } from './session.js';

// The console's Referrals and Storefront keys pages (console/README.md), each control found
// by its accessible name.

describeInBrowser(`the console's referrals and storefront keys pages (${TEST_DIALECT})`, () => {
  let s: ConsoleSession;
  let page: Page;
  const get = async (path: string) => (await s.t.request('GET', `${API}/${path}`)).json().data;

  beforeAll(async () => {
    s = await openConsole();
    page = s.page;
    await s.t.request('PUT', `${API}/customers/1001`, { body: { email: 'ada@example.com', first_name: 'Ada' } });
    await s.t.request('POST', `${API}/earning_rules`, { body: { kind: 'referral_referrer', points_amount: 50 } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("makes referrals, with the API's refusals beside the fields they name", async () => {
    await s.open('#/referrals', 'Referrals');
    await page.getByRole('status').filter({ hasText: 'No referrals yet.' }).waitFor();
    await s.expectAccessible('referrals-empty');
    const form = page.getByRole('form', { name: 'New referral' });
    await form.getByLabel('Referrer').fill('999');
    await form.getByLabel("Friend's e-mail").fill('grace@example.com');
    await form.getByRole('button', { name: 'Create referral' }).click();
    expect(await s.fieldError(form.getByLabel('Referrer'))).toMatch(/No customer/);

    await form.getByLabel('Referrer').fill('ada@example.com');
    await form.getByLabel("Friend's e-mail").fill('ADA@example.com');
    await form.getByRole('button', { name: 'Create referral' }).click();
    expect(await s.fieldError(form.getByLabel("Friend's e-mail"))).toMatch(/own address/);
    await s.expectAccessible('referral-error');

    await form.getByLabel("Friend's e-mail").fill('grace@example.com');
    await form.getByRole('button', { name: 'Create referral' }).click();
    await page.getByRole('cell', { name: 'grace@example.com' }).waitFor();
    await form.getByLabel('Referrer').fill('1001');
    await form.getByLabel("Friend's e-mail").fill('linus@example.com');
    await form.getByRole('button', { name: 'Create referral' }).click();
    await page.getByRole('cell', { name: 'linus@example.com' }).waitFor();
    expect(await get('referrals')).toMatchObject([
      { referrer_remote_id: 1001, referred_email: 'grace@example.com', status: 'pending' },
      { referrer_remote_id: 1001, referred_email: 'linus@example.com', status: 'pending' },
    ]);
  });

  it('completes one referral and cancels another, each after a confirmation', async () => {
    const grace = page.getByRole('row').filter({ hasText: 'grace@example.com' });
    await grace.getByRole('button', { name: 'Complete' }).click();
    const complete = page.getByRole('dialog', { name: /^Complete referral \d+\?$/ });
    await s.expectAccessible('referral-complete');
    await complete.getByRole('button', { name: 'Complete referral' }).click();
    await grace.getByRole('cell', { name: 'Completed', exact: true }).waitFor();
    expect(await grace.getByRole('button', { name: 'Complete' }).count()).toBe(0);
    expect((await get('customers/1001')).points_balance).toBe(50);

    const linus = page.getByRole('row').filter({ hasText: 'linus@example.com' });
    await linus.getByRole('button', { name: 'Cancel referral' }).click();
    await page
      .getByRole('dialog', { name: /^Cancel referral \d+\?$/ })
      .getByRole('button', { name: 'Cancel the referral' })
      .click();
    await linus.getByRole('cell', { name: 'Cancelled', exact: true }).waitFor();
    expect((await get('referrals')).map((r: { status: string }) => r.status)).toEqual(['completed', 'cancelled']);
    await s.expectFitsPhone('referrals');
  });

  it('creates a storefront key, shows its publishable key and its secret once, and says which origin is wrong', async () => {
    await s.open('#/storefront-keys', 'Storefront keys');
    await page.getByRole('status').filter({ hasText: 'No storefront keys yet' }).waitFor();
    await s.expectAccessible('storefront-keys-empty');
    const form = page.getByRole('form', { name: 'New storefront key' });
    await form.getByLabel('Allowed origins').fill('https://shop.example, shop.example/path');
    await form.getByRole('button', { name: 'Create storefront key' }).click();
    expect(await s.fieldError(form.getByLabel('Allowed origins'))).toMatch(/Allowed origins/);

    await form.getByLabel('Allowed origins').fill('https://shop.example, https://www.shop.example');
    await form.getByRole('button', { name: 'Create storefront key' }).click();
    const created = form.getByRole('status').filter({ hasText: /^Storefront key \d+ created/ });
    await created.waitFor();
    const shown = await created.locator('code').allTextContents();
    expect(shown).toEqual([expect.stringMatching(/^pk_/), expect.stringMatching(/^sks_/)]);
    await page.getByRole('region', { name: 'Storefront keys' }).getByRole('cell', { name: shown[0] }).waitFor();
    expect(await get('storefront_keys')).toMatchObject([{ publishable_key: shown[0], allowed_origins: ['https://shop.example', 'https://www.shop.example'] }]);
    await s.expectAccessible('storefront-key-created');
    await s.expectFitsPhone('storefront-keys');
  });

  it('revokes a storefront key after a confirmation', async () => {
    const row = page.getByRole('region', { name: 'Storefront keys' }).getByRole('row').filter({ hasText: 'https://www.shop.example' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog', { name: /^Revoke storefront key \d+\?$/ });
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await get('storefront_keys')).toHaveLength(1);
    await row.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke storefront key' }).click();
    await page.getByRole('status').filter({ hasText: 'No storefront keys yet' }).waitFor();
    expect(await get('storefront_keys')).toEqual([]);
  });
});
