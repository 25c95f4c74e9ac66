import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createWebhook, storeWebhookUrl, strictAndOpen } from './fixtures.js';

// A webhook url whose host is a non-public IP literal (or localhost) could never be delivered
// to: POST and PATCH refuse it with the body's other errors, unless WEBHOOK_ALLOW_PRIVATE_URLS.
// Names are not resolved when written; deliveries guard them (ssrf.test.ts).

const failures = (res: Parameters<typeof errorOf>[0]) =>
  errorOf(res)
    .details!.map((d) => [d.param, d.code])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));

const REFUSED = [
  ['http://127.0.0.1:8080/hooks', '127.0.0.1 is loopback'],
  ['http://10.1.2.3/hooks', '10.1.2.3 is private'],
  ['https://192.168.0.10/hooks', '192.168.0.10 is private'],
  ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is link-local'],
  ['http://0.0.0.0/', '0.0.0.0 is unspecified'],
  ['http://2130706433/hooks', '127.0.0.1 is loopback'],
  ['http://[::1]:3000/hooks', '[::1] is loopback'],
  ['https://[fc00::1]/hooks', '[fc00::1] is private'],
  ['http://[::ffff:127.0.0.1]/hooks', '[::ffff:7f00:1] is loopback'],
  ['http://localhost:3000/hooks', 'localhost is loopback'],
  ['http://api.LOCALHOST./hooks', 'api.localhost. is loopback'],
] as const;

const ACCEPTED = [
  'https://93.184.216.34/hooks',
  'https://[2606:4700:4700::1111]/hooks',
  'https://hooks.example.com/loyalty',
  'http://localhost.example.com/hooks',
];

describe(`webhook urls on non-public addresses (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let open: TestContext;
  beforeAll(async () => {
    ({ strict: t, open } = await strictAndOpen());
  });
  afterAll(async () => {
    await t.close();
    await open.close();
  });

  const urlDetail = (message: string) => ({ param: 'url', code: 'url_not_public', message: `url must point at a public address; ${message}` });

  it.each(REFUSED)('refuses %s on create', async (url, message) => {
    const res = await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url } });
    expect(res.statusCode, res.body).toBe(422);
    const error = errorOf(res);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'validation_failed', message: urlDetail(message).message });
    expect(error.details).toEqual([urlDetail(message)]);
  });

  it.each(REFUSED)('refuses %s on PATCH, and keeps the stored url', async (url, message) => {
    const { id } = await createWebhook(t, 'customer.created', 'https://hooks.example.com/before');
    const res = await t.request('PATCH', `${API}/webhooks/${id}`, { body: { url } });
    expect(res.statusCode, res.body).toBe(422);
    expect(errorOf(res).details).toEqual([urlDetail(message)]);
    expect((await t.request('GET', `${API}/webhooks/${id}`)).json().data.url).toBe('https://hooks.example.com/before');
  });

  it('reports the url beside every other failing field', async () => {
    const created = await t.request('POST', `${API}/webhooks`, { body: { topic: 'nope', url: 'http://[::1]/hooks', extra: 1 } });
    expect(created.statusCode).toBe(422);
    expect(errorOf(created).message).toBe('3 fields are invalid');
    expect(failures(created)).toEqual([
      ['extra', 'unknown_parameter'],
      ['topic', 'invalid_value'],
      ['url', 'url_not_public'],
    ]);

    const { id } = await createWebhook(t, 'customer.created');
    const patched = await t.request('PATCH', `${API}/webhooks/${id}`, { body: { topic: 'nope', url: 'http://10.0.0.5/hooks' } });
    expect(failures(patched)).toEqual([
      ['topic', 'invalid_value'],
      ['url', 'url_not_public'],
    ]);
  });

  it('judges the url only once it passed its schema', async () => {
    const res = await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url: 'ftp://127.0.0.1/hooks' } });
    expect(failures(res)).toEqual([['url', 'invalid_format']]);
  });

  it.each(ACCEPTED)('accepts %s (public, or a name, which deliveries guard)', async (url) => {
    const res = await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.url).toBe(url);
    const patched = await t.request('PATCH', `${API}/webhooks/${res.json().data.id}`, { body: { url } });
    expect(patched.statusCode, patched.body).toBe(200);
  });

  it('asks a webhook stored with a private url for a public one at its next change', async () => {
    const { id } = await createWebhook(t, 'customer.created');
    await storeWebhookUrl(t, id, 'http://10.0.0.5/hooks');
    const topicOnly = await t.request('PATCH', `${API}/webhooks/${id}`, { body: { topic: 'customer.updated' } });
    expect(topicOnly.statusCode).toBe(422);
    expect(failures(topicOnly)).toEqual([['url', 'url_not_public']]);
    const fixed = await t.request('PATCH', `${API}/webhooks/${id}`, { body: { topic: 'customer.updated', url: 'https://hooks.example.com/new' } });
    expect(fixed.statusCode, fixed.body).toBe(200);
  });

  it('accepts every such url when WEBHOOK_ALLOW_PRIVATE_URLS is true', async () => {
    expect(open.config.webhooks.allowPrivateUrls).toBe(true);
    for (const [url] of REFUSED) {
      const res = await open.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
      const { id } = res.json().data;
      const patched = await open.request('PATCH', `${API}/webhooks/${id}`, { body: { url: 'http://[::ffff:10.0.0.5]/hooks' } });
      expect(patched.statusCode, patched.body).toBe(200);
    }
  });
});
