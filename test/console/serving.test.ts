import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIR } from '../../src/console/routes.js';
import { errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// How the API process serves the console's built files (src/console/routes.ts), and the size
// budget of its JavaScript (console/README.md: at most 250 KB gzipped).

const BUDGET_BYTES = 250 * 1024;

describe(`the console's files at /console (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let off: TestContext;
  beforeAll(async () => {
    if (!fs.existsSync(path.join(CONSOLE_DIR, 'index.html'))) throw new Error(`${CONSOLE_DIR} is not built: run npm run build (npm test does it)`);
    t = await setup();
    off = await setup({ config: { console: false } });
  });
  afterAll(async () => {
    await t.close();
    await off.close();
  });

  it('serves the page at /console and /console/, with a policy that runs only its own scripts and is asked for again each time', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<title>Loyalty console</title>');
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['cache-control']).toBe('no-cache');
    }
  });

  it("serves its hashed assets for a year, and answers an unknown file with the API's 404", async () => {
    const page = (await t.app.inject({ method: 'GET', url: '/console/' })).body;
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const res = await t.app.inject({ method: 'GET', url: script! });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const missing = await t.app.inject({ method: 'GET', url: '/console/assets/nothing.js' });
    expect(missing.statusCode).toBe(404);
    expect(errorOf(missing).code).toBe('not_found');
  });

  it("is not part of the API's OpenAPI document", async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
  });

  it('is off with CONSOLE=false', async () => {
    for (const url of ['/console', '/console/', '/console/index.html']) {
      const res = await off.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(errorOf(res).code).toBe('not_found');
    }
  });

  it(`keeps its JavaScript within ${BUDGET_BYTES / 1024} KB gzipped`, () => {
    const assets = path.join(CONSOLE_DIR, 'assets');
    const scripts = fs.readdirSync(assets).filter((f) => f.endsWith('.js'));
    expect(scripts.length).toBeGreaterThan(0);
    const gzipped = scripts.reduce((sum, f) => sum + zlib.gzipSync(fs.readFileSync(path.join(assets, f)), { level: 9 }).length, 0);
    process.stdout.write(`console JavaScript: ${scripts.length} file(s), ${(gzipped / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_BYTES / 1024} KB)\n`);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
