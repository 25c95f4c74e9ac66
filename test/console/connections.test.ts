import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { describeInBrowser } from '../helpers/browser.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { shopifyCustomer, shopifyHeaders } from '../connections/payloads.js';
import { createCustomers, createWebhook, FakeTransport, grant, runJob } from '../webhooks/fixtures.js';
import { openConsole, type ConsoleSession } from './session.js';

// The console's Connections pages (docs/connections.md): add a connection, copy its ingest URL,
// see its deliveries by status and replay a failed one; and on the webhooks' deliveries page,
// "Retry" (send now) on a delivery not yet delivered.

const SECRET = 'shpss_console_test_secret_0123456789';

describeInBrowser(`the console's connections pages (${TEST_DIALECT})`, () => {
  let s: ConsoleSession;
  let page: Page;
  const transport = new FakeTransport();

  beforeAll(async () => {
    s = await openConsole({ webhookTransport: transport.send, config: { publicUrl: 'https://loyalty.example.com' } });
    page = s.page;
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  });
  afterAll(async () => {
    await s?.close();
  });

  it('adds a connection, copies its ingest URL, and replays a failed delivery once its cause is fixed', async () => {
    await s.open('#/connections', 'Connections');
    await page.getByRole('status').filter({ hasText: 'No connections yet' }).waitFor();
    await s.expectAccessible('connections-empty');
    const form = page.getByRole('form', { name: 'New connection' });
    await form.getByLabel('Name').fill('Main store');
    await form.getByLabel('Shop domain').fill('example.myshopify.com');
    await form.getByLabel('Signing secret').fill(SECRET);
    await form.getByRole('button', { name: 'Create connection' }).click();
    await form
      .getByRole('status')
      .filter({ hasText: /^Connection \d+ created/ })
      .waitFor();
    const [connection] = (await s.t.request('GET', `${API}/connections`)).json().data as { id: number; ingest_url: string }[];
    expect(connection!.ingest_url).toBe(`https://loyalty.example.com/ingest/v1/shopify/${connection!.id}`);
    expect(JSON.stringify(connection)).not.toContain(SECRET);
    const copy = page.getByRole('button', { name: `the ingest URL of connection ${connection!.id}` });
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(connection!.ingest_url);
    await s.expectAccessible('connection-created');

    // The store sends two customers; the second's e-mail is held by another customer: failed.
    expect((await s.t.request('PUT', `${API}/customers/42`, { body: { email: 'taken@example.com' } })).statusCode).toBe(201);
    for (const [id, email] of [
      [7_100_000_000_101, 'new@example.com'],
      [7_100_000_000_102, 'taken@example.com'],
    ] as const) {
      const body = JSON.stringify(shopifyCustomer({ id, email, updatedAt: s.t.clock.now }));
      const res = await s.t.app.inject({
        method: 'POST',
        url: `/ingest/v1/shopify/${connection!.id}`,
        headers: shopifyHeaders('customers/create', body, SECRET),
        payload: body,
      });
      expect(res.statusCode).toBe(200);
    }
    await page.getByRole('link', { name: `Deliveries of connection ${connection!.id}` }).click();
    await page.getByRole('heading', { name: `Deliveries of connection ${connection!.id}`, level: 1 }).waitFor();
    const table = page.getByRole('region', { name: 'Deliveries' });
    await table.getByRole('cell', { name: 'applied', exact: true }).waitFor();
    await page.getByLabel('Status').selectOption('failed');
    await expect.poll(() => table.getByRole('cell', { name: 'applied', exact: true }).count()).toBe(0);
    const failed = table.getByRole('row').filter({ hasText: 'failed' });
    await failed.getByRole('cell', { name: /email/ }).waitFor();
    await s.expectAccessible('connection-deliveries-failed');

    expect((await s.t.request('PUT', `${API}/customers/42`, { body: { email: 'other@example.com' } })).statusCode).toBe(200);
    await failed.getByRole('button', { name: /^Replay delivery \d+$/ }).click();
    await page
      .getByRole('status')
      .filter({ hasText: /^Delivery \d+ replayed: applied\.$/ })
      .waitFor();
    await page.getByRole('status').filter({ hasText: 'No failed deliveries.' }).waitFor();
    expect((await s.t.request('GET', `${API}/customers/7100000000102`)).json().data).toMatchObject({ email: 'taken@example.com' });
    await s.expectFitsPhone('connection-deliveries');
  });

  it('offers Retry (send now) on a webhook delivery that is still pending between attempts', async () => {
    await createCustomers(s.t, [1]);
    const webhook = await createWebhook(s.t, 'points_event.created', 'https://example.com/hooks/loyalty');
    expect((await s.t.request('POST', `${API}/points_events/batch`, { body: { points_events: [grant(1, 5)] } })).statusCode).toBe(201);
    // One failed attempt: pending, its next try hours away.
    transport.fallback = 503;
    await runJob(s.t, 'deliver-webhooks');
    const [delivery] = (await s.t.request('GET', `${API}/webhooks/${webhook.id}/deliveries`)).json().data as {
      id: number;
      status: string;
      next_attempt_at: string;
    }[];
    expect(delivery).toMatchObject({ status: 'pending' });
    expect(Date.parse(delivery!.next_attempt_at)).toBeGreaterThan(s.t.clock.now);

    await s.open(`#/webhooks/${webhook.id}`, `Deliveries of webhook ${webhook.id}`);
    const row = page.getByRole('region', { name: 'Deliveries' }).getByRole('row').filter({ hasText: 'the endpoint answered HTTP 503' });
    await row.getByRole('button', { name: 'Retry' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Delivery ${delivery!.id} is pending again` })
      .waitFor();
    const after = (await s.t.request('GET', `${API}/webhooks/${webhook.id}/deliveries`)).json().data[0];
    expect(Date.parse(after.next_attempt_at)).toBeLessThanOrEqual(s.t.clock.now);
    transport.fallback = 200;
    await runJob(s.t, 'deliver-webhooks');
    expect((await s.t.request('GET', `${API}/webhooks/${webhook.id}/deliveries`)).json().data[0]).toMatchObject({ status: 'delivered' });
    await s.expectAccessible('webhook-delivery-retried');
  });
});
