import { expect } from 'vitest';
import { jobs } from '../../src/jobs.js';
import type { WebhookRequest, WebhookTransport } from '../../src/webhooks/delivery.js';
import { loadConfig } from '../../src/config.js';
import { API, setup, type TestContext } from '../helpers/app.js';

// Helpers shared by the webhook tests: a scripted transport, the jobs, and the outbox's rows.

/** A transport that records every request and answers from a script (a status, or an Error to throw). */
export class FakeTransport {
  readonly requests: WebhookRequest[] = [];
  /** Answers used in order; once used up, `fallback`. */
  script: (number | Error)[] = [];
  fallback: number | Error = 200;
  /** Runs inside each send, before it answers (to race or to change things mid-send). */
  during: ((request: WebhookRequest) => Promise<void>) | null = null;

  readonly send: WebhookTransport = async (request) => {
    this.requests.push(request);
    if (this.during) await this.during(request);
    const answer = this.script.length > 0 ? this.script.shift()! : this.fallback;
    if (answer instanceof Error) throw answer;
    return { status: answer };
  };

  deliveryIds(): number[] {
    return this.requests.map((r) => Number(r.headers['loyalty-delivery-id']));
  }
}

export async function runJob(t: TestContext, name: 'deliver-webhooks' | 'prune-webhook-deliveries' | 'expire-lots' | 'announce-campaigns'): Promise<unknown> {
  const job = jobs.find((j) => j.name === name);
  expect(job, name).toBeDefined();
  return job!.run(t.app);
}

export async function createWebhook(t: TestContext, topic: string, url = 'https://example.com/hooks', token?: string): Promise<{ id: number; secret: string }> {
  const res = await t.request('POST', `${API}/webhooks`, { body: { topic, url }, ...(token ? { token } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().data.id, secret: res.json().data.secret };
}

/**
 * Points a stored webhook at `url` without the API's rules: a webhook written before its url was
 * judged, or while WEBHOOK_ALLOW_PRIVATE_URLS was on. Deliveries must still guard it.
 */
export async function storeWebhookUrl(t: TestContext, id: number, url: string): Promise<void> {
  const result = await t.database.db.updateTable('webhooks').set({ url }).where('id', '=', id).executeTakeFirst();
  expect(Number(result.numUpdatedRows)).toBe(1);
}

export interface StoredDelivery {
  id: number;
  webhook_id: number;
  event_id: string;
  topic: string;
  status: string;
  attempt_count: number;
  next_attempt_at: number | null;
  body: { id: string; topic: string; shop_id: number; created_at: string; data: any };
}

/** The shop's deliveries straight from the outbox table, in id order. */
export async function storedDeliveries(t: TestContext, shopId = t.shop.id): Promise<StoredDelivery[]> {
  const rows = await t.database.db.selectFrom('webhook_deliveries').selectAll().where('shop_id', '=', shopId).orderBy('id').execute();
  return rows.map((r) => ({
    id: Number(r.id),
    webhook_id: Number(r.webhook_id),
    event_id: r.event_id,
    topic: r.topic,
    status: r.status,
    attempt_count: Number(r.attempt_count),
    next_attempt_at: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
    body: JSON.parse(r.payload),
  }));
}

export async function createCustomers(t: TestContext, ids: number[], token?: string): Promise<void> {
  for (const id of ids) {
    const res = await t.request('PUT', `${API}/customers/${id}`, { body: { email: `customer${id}@example.com` }, ...(token ? { token } : {}) });
    expect([200, 201], res.body).toContain(res.statusCode);
  }
}

export const grant = (customer: number | string, points: number, extra: Record<string, unknown> = {}) => ({
  customer_identifier: String(customer),
  source: 'manual',
  points_amount: points,
  ...extra,
});

/** Two apps on databases of their own: one as deployed, one with WEBHOOK_ALLOW_PRIVATE_URLS. */
export async function strictAndOpen(): Promise<{ strict: TestContext; open: TestContext }> {
  return { strict: await setup(), open: await setup({ config: { webhooks: { ...loadConfig({}).webhooks, allowPrivateUrls: true } } }) };
}
