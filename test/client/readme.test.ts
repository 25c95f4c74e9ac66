import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// client/README.md's example runs as written against the server (its import pointed at the client's source).

const ROOT = path.resolve(import.meta.dirname, '../..');

describe(`client/README.md's example (${TEST_DIALECT})`, () => {
  let t: TestContext;
  let file: string;
  beforeAll(async () => {
    t = await setup();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
    await t.close();
  });

  it('runs: upserts, grants, lists every customer and catches a 404', async () => {
    const readme = fs.readFileSync(path.join(ROOT, 'client/README.md'), 'utf8');
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("from '@loyalty-api/client'");
    // Outside the source tree, so that no build picks it up while it exists.
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-readme-')), 'example.ts');
    fs.writeFileSync(file, example!.replace("'@loyalty-api/client'", JSON.stringify(path.join(ROOT, 'client/src/index.js'))));
    vi.stubEnv('LOYALTY_URL', `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`);
    vi.stubEnv('LOYALTY_TOKEN', t.token);
    const printed: unknown[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(line));
    try {
      await import(file);
    } finally {
      vi.unstubAllEnvs();
      log.mockRestore();
    }
    expect(printed).toEqual(['granted 120 points; balance 120', 'customer 7012345678: 120 points', expect.stringMatching(/^404 not_found \(req_\S+\)$/)]);
    expect((await t.request('GET', `${API}/customers/7012345678`)).json().data.points_balance).toBe(120);
  });
});
