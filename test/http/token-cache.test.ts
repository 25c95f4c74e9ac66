import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TOKEN_CACHE_MS } from '../../src/http/auth.js';
import { createToken } from '../../src/shops/repository.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// A token in steady use is looked up again before it expires, beside a request rather than in
// its path, and requests that find it uncached together share one lookup: under a flood, every
// expiry sent all the requests in flight to wait in the database's line before their real work.
// Counted by the connections taken from PostgreSQL's pools.
describe.runIf(TEST_DIALECT === 'postgres')('token lookups out of the request path (postgres)', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(async () => t?.close());
  afterEach(() => vi.restoreAllMocks());

  it('looks a token up once for the requests that find it uncached together', async () => {
    const { token } = await createToken(t.database.db, t.shop.id, 'fresh', t.clock.now);
    const connects = vi.spyOn(pg.Pool.prototype, 'connect');
    const answers = await Promise.all(Array.from({ length: 10 }, () => t.request('GET', `${API}/shop`, { token })));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
    // One lookup, and one connection for each handler.
    expect(connects).toHaveBeenCalledTimes(11);
  });

  it('looks a token in use up again before it expires, beside a request', async () => {
    const { token } = await createToken(t.database.db, t.shop.id, 'busy', t.clock.now);
    // The cache's clock, moved by hand.
    const realNow = performance.now.bind(performance);
    let shift = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => realNow() + shift);
    expect((await t.request('GET', `${API}/shop`, { token })).statusCode).toBe(200);
    // Past half its time: answered from the cache, and looked up again on the side.
    shift += TOKEN_CACHE_MS * 0.75;
    expect((await t.request('GET', `${API}/shop`, { token })).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Past the first lookup's time, not half the second's: no lookup in this request's path.
    shift += TOKEN_CACHE_MS * 0.35;
    const connects = vi.spyOn(pg.Pool.prototype, 'connect');
    expect((await t.request('GET', `${API}/shop`, { token })).statusCode).toBe(200);
    expect(connects).toHaveBeenCalledTimes(1);
  });
});
