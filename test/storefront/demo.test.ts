import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, start } from '../helpers/server.js';
import { loyalty } from '../ledger/fixtures.js';

// `npm start` on an empty database prints the URL of /storefront/demo, which hosts the panel
// for a demo customer while the demo shop exists.

describe(`the panel's demo page (${TEST_DIALECT})`, () => {
  it('is printed on a fresh database, signs in a demo customer with points, and is gone with the demo shop', async () => {
    const url = await freshDatabase();
    const server = await start(url, { LOYALTY_BOOTSTRAP: 'true' }, { capture: true });
    let stdout = server.output().stdout;
    for (let i = 0; i < 50 && !stdout.includes('/storefront/demo'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      stdout = server.output().stdout;
    }
    const demo = /^Shopper's loyalty panel \(demo customer\): (\S+)$/m.exec(stdout)?.[1];
    expect(demo, stdout).toBe(`${server.url}/storefront/demo`);

    const page = await fetch(demo!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toMatch(/<loyalty-panel api-base="" publishable-key="pk_[\w-]+" token-url="\/storefront\/demo\/token">/);
    expect(html).toContain('<script type="module" src="/storefront/loyalty.js">');
    const script = await fetch(`${server.url}/storefront/loyalty.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(await script.text()).toContain('loyalty-panel');

    const { token } = (await (await fetch(`${server.url}/storefront/demo/token`)).json()) as { token: string };
    const me = await fetch(`${server.url}/storefront_api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { data: { points_balance: number } }).data.points_balance).toBeGreaterThan(0);
    const rewards = (await (await fetch(`${server.url}/storefront_api/v1/me/rewards`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      data: unknown[];
    };
    expect(rewards.data.length).toBeGreaterThan(0);

    expect((await loyalty(url, 'shops', 'delete', '--shop', '1', '--yes')).code).toBe(0);
    expect((await fetch(demo!)).status).toBe(404);
    expect((await fetch(`${server.url}/storefront/demo/token`)).status).toBe(404);
  });
});
