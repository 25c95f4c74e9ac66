import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverUrl } from '../../src/cli/console-link.js';
import { loadConfig } from '../../src/config.js';
import { cliContext, type CliContext, type CliShop } from '../helpers/cli.js';
import { TEST_DIALECT } from '../helpers/database.js';

// `loyalty console-link --shop N`: a new token for the shop, in the fragment of a console
// sign-in URL (the browser side is in console.test.ts).

describe(`loyalty console-link (${TEST_DIALECT})`, () => {
  let cli: CliContext;
  let shop: CliShop;
  beforeAll(async () => {
    cli = await cliContext();
    shop = await cli.createShop('Linked');
  });
  afterAll(() => cli.close());

  it('prints a sign-in URL whose fragment carries a new, working token of that shop', async () => {
    const out = await cli.ok('console-link', '--shop', String(shop.shop.id), '--url', 'https://loyalty.example.com/');
    const url = new URL(/^https:\S+$/m.exec(out)![0]);
    expect(`${url.origin}${url.pathname}`).toBe('https://loyalty.example.com/console/');
    expect(url.search).toBe('');
    const token = decodeURIComponent(url.hash.replace(/^#token=/, ''));
    expect(token).not.toBe(shop.token);
    const answer = await cli.get(token, 'shop');
    expect(answer.status).toBe(200);
    expect(answer.body.data.id).toBe(shop.shop.id);
    expect(out).toMatch(/loyalty tokens revoke \d+ --shop \d+/);
  });

  it('prints JSON with --json, and names the token so that it can be revoked', async () => {
    const out = JSON.parse(await cli.ok('console-link', '--shop', String(shop.shop.id), '--url', 'http://127.0.0.1:8080', '--name', 'support desk', '--json'));
    expect(out).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:8080\/console\/#token=lty_/),
      token_id: expect.any(Number),
      shop_id: shop.shop.id,
      expires_at: expect.any(String),
    });
    // Short-lived (console/README.md): 12 hours by default.
    const hours = (Date.parse(out.expires_at) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(11);
    expect(hours).toBeLessThanOrEqual(12);
    expect(await cli.ok('tokens', 'list', '--shop', String(shop.shop.id))).toMatch(new RegExp(`^${out.token_id}\\s+support desk`, 'm'));
  });

  it('refuses an unknown shop and a URL that is not http(s), creating nothing', async () => {
    const before = await cli.ok('tokens', 'list', '--shop', String(shop.shop.id), '--json');
    const unknown = await cli.run('console-link', '--shop', '999999');
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain('No shop with id 999999');
    const badUrl = await cli.run('console-link', '--shop', String(shop.shop.id), '--url', 'ftp://example.com');
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toContain('--url must be an http or https URL');
    expect(await cli.ok('tokens', 'list', '--shop', String(shop.shop.id), '--json')).toBe(before);
  });

  it('addresses the server by PUBLIC_URL, else by HOST and PORT (a wildcard host is this machine)', () => {
    expect(serverUrl(loadConfig({ PUBLIC_URL: 'https://loyalty.example.com/' }))).toBe('https://loyalty.example.com');
    expect(serverUrl(loadConfig({ PORT: '8080' }))).toBe('http://localhost:8080');
    expect(serverUrl(loadConfig({ HOST: '10.0.0.5', PORT: '3000' }))).toBe('http://10.0.0.5:3000');
    expect(serverUrl(loadConfig({ HOST: '::1', PORT: '3000' }))).toBe('http://[::1]:3000');
  });
});
