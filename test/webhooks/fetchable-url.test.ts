import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BAD_PORTS } from '../../src/core/fetchable-url.js';
import { API, errorOf, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { createWebhook, strictAndOpen } from './fixtures.js';

// A webhook url that fetch refuses at every delivery ("bad port"), that names no host after
// `//`, or that carries credentials is refused when written, even with WEBHOOK_ALLOW_PRIVATE_URLS.

const REFUSED = [
  ['https://hooks.example.com:4190/loyalty', 'port_not_allowed', "url must not use port 4190, which fetch refuses (the Fetch standard's bad ports)"],
  ['http://93.184.216.34:25/hooks', 'port_not_allowed', "url must not use port 25, which fetch refuses (the Fetch standard's bad ports)"],
  ['http:///hooks.example.com/x', 'invalid_format', 'url must name a host after //'],
  ['https://\\hooks.example.com/x', 'invalid_format', 'url must be a valid uri'],
  ['https://user:secret@hooks.example.com/x', 'url_has_credentials', 'url must not hold a user name or password'],
  ['https://token@hooks.example.com/x', 'url_has_credentials', 'url must not hold a user name or password'],
  ['https://@hooks.example.com/x', 'url_has_credentials', 'url must not hold a user name or password'],
] as const;

describe(`webhook urls that fetch cannot deliver to (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let open: TestContext;
  beforeAll(async () => {
    ({ strict: t, open } = await strictAndOpen());
  });
  afterAll(async () => {
    await t.close();
    await open.close();
  });

  it("repeats undici's bad-port list exactly", () => {
    // undici does not export it; read its file by path to catch a future change of the list.
    const constants = createRequire(import.meta.url)(path.resolve('node_modules/undici/lib/web/fetch/constants.js')) as { badPorts: string[] };
    expect([...BAD_PORTS].sort()).toEqual([...constants.badPorts].sort());
  });

  it.each(REFUSED)('refuses %s on create and on PATCH, whatever WEBHOOK_ALLOW_PRIVATE_URLS says', async (url, code, message) => {
    for (const ctx of [t, open]) {
      const created = await ctx.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url } });
      expect(created.statusCode, created.body).toBe(422);
      expect(errorOf(created).details).toEqual([{ param: 'url', code, message }]);
      const { id } = await createWebhook(ctx, 'customer.created', 'https://hooks.example.com/before');
      const patched = await ctx.request('PATCH', `${API}/webhooks/${id}`, { body: { url } });
      expect(patched.statusCode, patched.body).toBe(422);
      expect(errorOf(patched).details).toEqual([{ param: 'url', code, message }]);
      expect((await ctx.request('GET', `${API}/webhooks/${id}`)).json().data.url).toBe('https://hooks.example.com/before');
    }
  });

  it('accepts a port fetch allows, and the default ports written out', async () => {
    for (const url of ['https://hooks.example.com:4191/loyalty', 'https://hooks.example.com:443/x', 'http://hooks.example.com:8080/x?a=b@c']) {
      const res = await t.request('POST', `${API}/webhooks`, { body: { topic: 'customer.created', url } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(201);
    }
  });
});
