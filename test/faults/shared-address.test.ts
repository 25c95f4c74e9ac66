import { describe, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { seedShop, startWithShop } from '../helpers/server.js';
import { verify } from './load.js';

// A shop behind the same NAT or proxy as a client that floods the API with unknown tokens:
// the address is limited (429 before any lookup of the guesses), but a valid token from it is
// never refused, whether the process has seen it before or it was created a moment ago.

async function status(url: string, token: string): Promise<number> {
  return (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status;
}

describe(`unknown tokens from a shared address (${TEST_DIALECT})`, () => {
  it('never refuses a valid token from an address that sent 300 unknown ones', async () => {
    const { server, url } = await startWithShop({ AUTH_FAILURES_MAX: '100' });
    const shop = `${server.url}${API}/shop`;
    const before = await seedShop(url);
    for (let i = 0; i < 100; i++) expect(await status(shop, `lty_guess${i}`)).toBe(401);
    // 200 more at once, beside valid tokens: the guesses share the loads of the live tokens.
    const after = seedShop(url);
    const [guesses, valid] = await Promise.all([
      Promise.all(Array.from({ length: 200 }, (_, i) => status(shop, `lty_guess_more${i}`))),
      after.then((token) => Promise.all([status(shop, before), status(shop, token)])),
    ]);
    expect(new Set(guesses)).toEqual(new Set([429]));
    expect(valid).toEqual([200, 200]);
    expect(await status(shop, await seedShop(url))).toBe(200);
    console.log('[fault] shared address: 100 guesses 401, 200 more 429, valid tokens (seen, unseen, created meanwhile) 200');
    expect(await verify(url)).toEqual({ ok: true, discrepancies: [] });
  });
});
