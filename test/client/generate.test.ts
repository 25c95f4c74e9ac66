import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setup, type TestContext } from '../helpers/app.js';

// `loyalty openapi` (built in dist/ by npm test) and the client's drift check.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const MAIN = path.join(ROOT, 'dist/src/main.js');
const GENERATE = path.join(ROOT, 'client/scripts/generate.mjs');

describe("the client's generated types", () => {
  let t: TestContext;
  let dir: string;
  beforeAll(async () => {
    t = await setup();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-generate-'));
  });
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it('come from the document /openapi.json serves, which loyalty openapi prints without a database', async () => {
    const { stdout } = await run(process.execPath, [MAIN, 'openapi'], {
      env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', PUBLIC_URL: '' },
    });
    const served = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(JSON.parse(stdout)).toEqual(served);
  });

  // Whether the committed file matches is CI's check (npm run client:check in .ci/run): routes
  // added on a branch regenerate it when they merge.
  it('fail the drift check when they differ from what the document gives', async () => {
    const stale = path.join(dir, 'schema.ts');
    fs.writeFileSync(
      stale,
      fs.readFileSync(path.join(ROOT, 'client/src/schema.ts'), 'utf8').replace('"/merchant_api/v1/shop": {', '"/merchant_api/v1/shops": {'),
    );
    const failed = await run(process.execPath, [GENERATE, '--check', '--schema', stale]).catch((error: { code: number; stderr: string }) => error);
    expect(failed).toMatchObject({ code: 1, stderr: expect.stringMatching(/out of date.*npm run client:generate/) });
  });
});
