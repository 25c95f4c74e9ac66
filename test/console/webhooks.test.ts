import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/delivery.js';
import { API } from '../helpers/app.js';
import { describeInBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createCustomers, createWebhook, FakeTransport, grant, runJob } from '../webhooks/fixtures.js';
import { openConsole, type ConsoleSession } from './session.js';

// The console's Webhooks pages (console/README.md): endpoints with their secret shown once,
// deliveries filtered by status, and "Retry" on a failed one.

describeInBrowser(`the console's webhooks pages (${TEST_DIALECT})`, () => {
  let s: ConsoleSession;
  let page: Page;
  const transport = new FakeTransport();
  const webhooks = async () => (await s.t.request('GET', `${API}/webhooks`)).json().data as Record<string, unknown>[];

  beforeAll(async () => {
    s = await openConsole({ webhookTransport: transport.send });
    page = s.page;
  });
  afterAll(async () => {
    await s?.close();
  });

  it('creates a webhook with two topics, shows its secret once, and puts the refusals beside the fields', async () => {
    await s.open('#/webhooks', 'Webhooks');
    await page.getByRole('status').filter({ hasText: 'No webhooks yet' }).waitFor();
    await s.expectAccessible('webhooks-empty');
    const form = page.getByRole('form', { name: 'New webhook' });
    const topics = form.getByRole('group', { name: 'Topics' });
    await form.getByLabel('URL').fill('https://example.com/hooks/console');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    await expect.poll(() => topics.getAttribute('aria-describedby')).toBeTruthy();
    expect(await page.locator(`[id="${await topics.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/topics/i);
    await s.expectAccessible('webhook-no-topics');

    await topics.getByRole('checkbox', { name: 'redemption.created' }).check();
    await topics.getByRole('checkbox', { name: 'customer.created' }).check();
    await form.getByLabel('URL').fill('http://127.0.0.1/hooks');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    const url = form.getByLabel('URL');
    await expect.poll(() => url.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`[id="${await url.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/^URL /);

    await form.getByLabel('URL').fill('https://example.com/hooks/console');
    await form.getByRole('button', { name: 'Create webhook' }).click();
    const created = form.getByRole('status').filter({ hasText: /^Webhook \d+ created/ });
    await created.waitFor();
    const secret = await created.locator('code').textContent();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('cell', { name: 'https://example.com/hooks/console' }).waitFor();
    await page.getByRole('cell', { name: 'customer.created, redemption.created', exact: true }).waitFor();
    expect(await webhooks()).toMatchObject([{ topics: ['customer.created', 'redemption.created'], url: 'https://example.com/hooks/console' }]);
    expect(JSON.stringify(await webhooks())).not.toContain(secret);
    await s.expectAccessible('webhook-created');
  });

  it("keeps each topic's name whole on its line, at 1280 and 390 px", async () => {
    await s.open('#/webhooks', 'Webhooks');
    const topics = page.getByRole('form', { name: 'New webhook' }).getByRole('group', { name: 'Topics' });
    await topics.getByRole('checkbox', { name: 'customer.vip_tier_changed' }).waitFor();
    await s.expectWholeNames(topics, 'the topics');
  });

  it('edits a webhook and deletes it after a confirmation', async () => {
    const row = page.getByRole('region', { name: 'Webhooks' }).getByRole('row').filter({ hasText: 'https://example.com/hooks/console' });
    await row.getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog', { name: /^Edit webhook \d+$/ });
    const topics = dialog.getByRole('group', { name: 'Topics' });
    expect(await topics.getByRole('checkbox', { name: 'redemption.created' }).isChecked()).toBe(true);
    // Every topic goes alone: the others are cleared and disabled.
    await topics.getByRole('checkbox', { name: 'Every topic, present and future' }).check();
    expect(await topics.getByRole('checkbox', { name: 'redemption.created' }).isChecked()).toBe(false);
    expect(await topics.getByRole('checkbox', { name: 'customer.created' }).isDisabled()).toBe(true);
    await s.expectAccessible('webhook-edit');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await row.getByRole('cell', { name: 'Every topic', exact: true }).waitFor();
    expect((await webhooks())[0]).toMatchObject({ topics: ['*'], topic: '*' });

    await row.getByRole('button', { name: 'Delete' }).click();
    await page
      .getByRole('dialog', { name: /^Delete webhook \d+\?$/ })
      .getByRole('button', { name: 'Delete webhook' })
      .click();
    await page.getByRole('status').filter({ hasText: 'No webhooks yet' }).waitFor();
    expect(await webhooks()).toEqual([]);
  });

  it('lists deliveries by status and retries a failed one', async () => {
    await createCustomers(s.t, [1]);
    const webhook = await createWebhook(s.t, 'points_event.created', 'https://example.com/hooks/loyalty');
    const res = await s.t.request('POST', `${API}/points_events/batch`, { body: { points_events: [grant(1, 5), grant(1, 7)] } });
    expect(res.statusCode).toBe(201);
    // The first is delivered; the second fails every attempt, about three days of them.
    transport.script = [200];
    transport.fallback = 503;
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await runJob(s.t, 'deliver-webhooks');
      s.t.clock.advance(RETRY_DELAYS_MS[i] ?? 0);
    }
    const deliveries = (await s.t.request('GET', `${API}/webhooks/${webhook.id}/deliveries`)).json().data as { id: number; status: string }[];
    expect(deliveries.map((d) => d.status)).toEqual(['delivered', 'failed']);
    const failed = deliveries[1]!.id;

    // Made through the API: a page opened afresh reads the list again.
    await s.open('#/programme', 'Earning rules');
    await s.open('#/webhooks', 'Webhooks');
    await page.getByRole('link', { name: `Deliveries of webhook ${webhook.id}` }).click();
    await page.getByRole('heading', { name: `Deliveries of webhook ${webhook.id}`, level: 1 }).waitFor();
    const table = page.getByRole('region', { name: 'Deliveries' });
    await table.getByRole('cell', { name: 'delivered', exact: true }).waitFor();
    await s.expectAccessible('deliveries');

    await page.getByLabel('Status').selectOption('failed');
    // The failed one without the delivered one: only the filtered answer shows that (while it loads, neither shows).
    const row = table.getByRole('row').filter({ hasText: 'the endpoint answered HTTP 503' });
    const shown = async () => [await table.getByRole('cell', { name: 'delivered', exact: true }).count(), await row.count()];
    await expect.poll(shown).toEqual([0, 1]);
    expect(await row.getByRole('cell', { name: String(failed), exact: true }).count()).toBe(1);
    await s.expectAccessible('deliveries-failed');

    await row.getByRole('button', { name: 'Retry' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Delivery ${failed} is pending again` })
      .waitFor();
    await page.getByRole('status').filter({ hasText: 'No failed deliveries.' }).waitFor();
    expect((await s.t.request('GET', `${API}/webhooks/${webhook.id}/deliveries`, { query: { status: 'pending' } })).json().data).toMatchObject([
      { id: failed, status: 'pending' },
    ]);

    transport.fallback = 200;
    await runJob(s.t, 'deliver-webhooks');
    await page.getByLabel('Status').selectOption('delivered');
    await expect.poll(() => page.getByRole('region', { name: 'Deliveries' }).getByRole('cell', { name: 'delivered', exact: true }).count()).toBe(2);
    await s.expectFitsPhone('deliveries');
    await s.open('#/webhooks', 'Webhooks');
    await s.expectFitsPhone('webhooks');
  });
});
