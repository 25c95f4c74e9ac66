import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { describeInBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { openConsole, type ConsoleSession } from './session.js';

// The console's API tokens and Audit log pages (console/README.md, docs/access.md), and what a
// token without a scope sees, each control found by its accessible name.

describeInBrowser(`the console's API tokens and audit log pages (${TEST_DIALECT})`, () => {
  let s: ConsoleSession;
  let page: Page;
  let secret: string;
  let tokenId: number;

  beforeAll(async () => {
    s = await openConsole();
    page = s.page;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.base });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('creates a token with a scope, shows its secret once with a copy button, and the token works only within its scope', async () => {
    await s.open('#/api-tokens', 'API tokens');
    const tokens = page.getByRole('region', { name: 'API tokens' });
    await tokens.getByRole('cell', { name: 'test (this console)' }).waitFor();
    await s.expectAccessible('api-tokens');

    const form = page.getByRole('form', { name: 'New API token' });
    await form.getByLabel('Name').fill('campaign planner');
    await form.getByRole('button', { name: 'Create API token' }).click();
    const scopes = form.getByRole('group', { name: 'Scopes' });
    await expect.poll(() => scopes.getAttribute('aria-describedby')).toBeTruthy();
    expect(await page.locator(`[id="${await scopes.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/^Scopes is required/);

    // "admin" stands for every scope and goes alone.
    await scopes.getByRole('checkbox', { name: 'admin' }).check();
    expect(await scopes.getByRole('checkbox', { name: 'campaigns:write' }).isDisabled()).toBe(true);
    await scopes.getByRole('checkbox', { name: 'admin' }).uncheck();
    await scopes.getByRole('checkbox', { name: 'campaigns:write' }).check();
    await form.getByRole('button', { name: 'Create API token' }).click();
    const created = form.getByRole('status').filter({ hasText: /^API token \d+ created/ });
    await created.waitFor();
    secret = (await created.locator('code').textContent())!;
    expect(secret).toMatch(/^lty_/);
    await created.getByRole('button', { name: 'Copy token' }).click();
    await created.getByText('Copied.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    await s.expectAccessible('api-token-created');

    const row = tokens.getByRole('row').filter({ hasText: 'campaign planner' });
    await row.getByRole('cell', { name: 'campaigns:write', exact: true }).waitFor();
    const listed = (await s.t.request('GET', `${API}/api_tokens`)).json().data as { id: number; name: string; scopes: string[] }[];
    const planner = listed.find((t) => t.name === 'campaign planner')!;
    expect(planner.scopes).toEqual(['campaigns:write']);
    tokenId = planner.id;
    expect(JSON.stringify(listed)).not.toContain(secret);

    // Within its scope it reads and writes; outside it, 403 naming the scope.
    expect((await s.t.request('GET', `${API}/campaigns`, { token: secret })).statusCode).toBe(200);
    const campaign = { name: 'Planned', starts_at: '2026-03-01T00:00:00Z', ends_at: '2026-03-08T00:00:00Z', bonus_points: 10 };
    expect((await s.t.request('POST', `${API}/campaigns`, { token: secret, body: campaign })).statusCode).toBe(201);
    const refused = await s.t.request('GET', `${API}/customers`, { token: secret });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({ code: 'insufficient_scope', message: expect.stringContaining('customers:read') });

    // Shown once: a page opened afresh lists the token without it.
    await s.open('#/audit-log', 'Audit log');
    await s.open('#/api-tokens', 'API tokens');
    await row.waitFor();
    expect(await page.evaluate<string>('document.body.innerText')).not.toContain(secret);
    await s.expectFitsPhone('api-tokens');
  });

  it("shows a write's entry with its change in the audit log, and filters by record and by token", async () => {
    const rule = (await s.t.request('POST', `${API}/earning_rules`, { body: { kind: 'signup', points_amount: 100 } })).json().data as { id: number };
    expect((await s.t.request('PATCH', `${API}/earning_rules/${rule.id}`, { body: { points_amount: 150 } })).statusCode).toBe(200);

    await s.open('#/audit-log', 'Audit log');
    const entries = page.getByRole('region', { name: 'Audit log entries' });
    const updated = entries.getByRole('row').filter({ hasText: 'Earning rule updated' });
    await updated.waitFor();
    expect(await updated.getByRole('listitem').allTextContents()).toEqual(['Points amount: 100 → 150']);
    expect(await updated.getByRole('cell', { name: `Earning rule ${rule.id}`, exact: true }).count()).toBe(1);
    expect(await updated.getByRole('cell', { name: /^test \(token \d+\)$/ }).count()).toBe(1);
    // Newest first: the update above the create.
    const actions = await entries.locator('tbody tr td:nth-child(3)').allTextContents();
    expect(actions.indexOf('Earning rule updated')).toBeLessThan(actions.indexOf('Earning rule created'));
    await s.expectAccessible('audit-log');

    const filters = page.getByRole('form', { name: 'Audit log filters' });
    const campaignRow = entries.getByRole('row').filter({ hasText: 'Campaign created' });
    expect(await campaignRow.count()).toBe(1);
    await filters.getByLabel('Token').selectOption({ label: `campaign planner (${tokenId})` });
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    // Only the filtered answer has the planner's entry without the rule's (while it loads, the old rows stay).
    const shown = async () => [await updated.count(), await campaignRow.count()];
    await expect.poll(shown).toEqual([0, 1]);
    expect(await campaignRow.getByRole('cell', { name: `campaign planner (token ${tokenId})` }).count()).toBe(1);

    await filters.getByLabel('Token').selectOption({ label: 'Any' });
    await filters.getByLabel('Resource').fill('earning_rule');
    await filters.getByLabel('Record ID').fill(String(rule.id));
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await expect.poll(async () => entries.locator('tbody tr td:nth-child(3)').allTextContents()).toEqual(['Earning rule updated', 'Earning rule created']);

    await filters.getByLabel('From (UTC day)').fill('2030-01-01');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('status').filter({ hasText: 'No entries match these filters.' }).waitFor();
    await filters.getByRole('button', { name: 'Clear filters' }).click();
    await campaignRow.waitFor();
    await s.expectFitsPhone('audit-log');
  });

  it('revokes a token after a confirmation, and the API refuses it from then on', async () => {
    await s.open('#/api-tokens', 'API tokens');
    const row = page.getByRole('region', { name: 'API tokens' }).getByRole('row').filter({ hasText: 'campaign planner' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke API token ${tokenId}?` });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await s.t.request('GET', `${API}/campaigns`, { token: secret })).statusCode).toBe(200);

    await row.getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByRole('button', { name: 'Revoke API token' }).click();
    await row.getByRole('cell', { name: /^Revoked / }).waitFor();
    expect(await row.getByRole('button', { name: 'Revoke' }).count()).toBe(0);
    expect((await s.t.request('GET', `${API}/campaigns`, { token: secret })).statusCode).toBe(401);
  });

  it('signed in with a token lacking a scope, a page says which scope it needs', async () => {
    const limited = await s.t.request('POST', `${API}/api_tokens`, { body: { name: 'reader', scopes: ['campaigns:read'] } });
    expect(limited.statusCode).toBe(201);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API token').fill(limited.json().data.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    await s.open('#/api-tokens', 'API tokens');
    await page.getByRole('alert').filter({ hasText: 'lacks the scope admin' }).waitFor();
    expect(await page.getByRole('form', { name: 'New API token' }).count()).toBe(0);
    expect(await page.getByText('Loading').count()).toBe(0);
    await s.expectAccessible('api-tokens-no-scope');
    await s.open('#/audit-log', 'Audit log');
    await page.getByRole('alert').filter({ hasText: 'lacks the scope admin' }).waitFor();
    expect(await page.getByText('Loading').count()).toBe(0);
    await s.open('#/programme/settings', 'Shop settings');
    await page.getByRole('alert').filter({ hasText: 'lacks the scope shop:read' }).waitFor();
    // What it may read, it reads.
    await s.open('#/programme/campaigns', 'Campaigns');
    await page.getByRole('cell', { name: 'Planned', exact: true }).waitFor();
  });
});
