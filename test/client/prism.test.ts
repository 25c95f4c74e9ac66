import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoyaltyClient, type LoyaltyClient } from '../../client/src/index.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// The document tells a client exactly what the server accepts: the typed client's calls go
// through a validating proxy (Stoplight Prism, --errors) that refuses any request or response
// the document does not allow, to the real server.

const PRISM = path.resolve(import.meta.dirname, '../../node_modules/.bin/prism');
const STARTUP_MS = 45_000;

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

/** `prism proxy` in front of `upstream`; resolves once it listens (bounded by STARTUP_MS). */
async function startPrism(document: string, upstream: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(PRISM, ['proxy', document, upstream, '--errors', '--host', '127.0.0.1', '--port', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`prism did not start within ${STARTUP_MS} ms:\n${output}`));
    }, STARTUP_MS);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`prism exited with ${code}:\n${output}`));
    });
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

describe(`the OpenAPI document, checked by a validating proxy (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, server, proxy): they run in order.
  let t: TestContext;
  let prism: { child: ChildProcess; url: string };
  let client: LoyaltyClient;
  let dir: string;
  const violations: string[] = [];
  beforeAll(async () => {
    t = await setup();
    const upstream = await t.app.listen({ host: '127.0.0.1', port: 0 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-prism-'));
    const document = path.join(dir, 'openapi.json');
    fs.writeFileSync(document, (await t.app.inject({ method: 'GET', url: '/openapi.json' })).body);
    prism = await startPrism(document, upstream);
    client = createLoyaltyClient({
      baseUrl: prism.url,
      token: t.token,
      retry: { attempts: 1 },
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        // Prism answers a request the document refuses itself, as problem+json; a response the document does not allow, with sl-violations.
        if (response.headers.get('content-type')?.startsWith('application/problem+json'))
          violations.push(`${init.method} ${input}: ${await response.clone().text()}`);
        if (response.headers.has('sl-violations')) violations.push(`${init.method} ${input}: ${response.headers.get('sl-violations')}`);
        return response;
      },
    });
  });
  afterAll(async () => {
    prism?.child.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  it("lets through the typed client's calls and the server's answers: integer ids, writes without a body", async () => {
    await client.PUT(`${API}/customers/{customer_identifier}`, { params: { path: { customer_identifier: 7012345678 } }, body: { email: 'ada@example.com' } });
    const event = await client.POST(`${API}/points_events`, { body: { customer_identifier: '7012345678', source: 'manual', points_amount: 500 } });
    await client.GET(`${API}/points_events/{id}`, { params: { path: { id: event.data.id } } });
    const reward = await client.POST(`${API}/rewards`, { body: { name: 'Five off', kind: 'fixed_amount_discount', points_price: 100, value: 5 } });
    await client.GET(`${API}/rewards/{id}`, { params: { path: { id: reward.data.id } } });
    const first = await client.POST(`${API}/redemptions`, { body: { customer_identifier: '7012345678', reward_id: reward.data.id } });
    const second = await client.POST(`${API}/redemptions`, { body: { customer_identifier: '7012345678', reward_id: reward.data.id } });
    expect((await client.POST(`${API}/redemptions/{id}/use`, { params: { path: { id: first.data.id } } })).data.status).toBe('used');
    expect((await client.POST(`${API}/redemptions/{id}/void`, { params: { path: { id: second.data.id } } })).data.status).toBe('voided');
    const bonus = await client.POST(`${API}/points_events`, { body: { customer_identifier: '7012345678', source: 'manual', points_amount: 30 } });
    const reversal = await client.POST(`${API}/points_events/{id}/reverse`, { params: { path: { id: bonus.data.id } } });
    expect(reversal.data.points_amount).toBe(-30);
    const all = [];
    for await (const e of client.paginate(`${API}/points_events`, { params: { query: { 'pagination[limit]': 2 } } })) all.push(e.id);
    expect(all.length).toBeGreaterThanOrEqual(4);
    await expect(client.GET(`${API}/rewards/{id}`, { params: { path: { id: 987654 } } })).rejects.toMatchObject({ status: 404, code: 'not_found' });
    expect(violations).toEqual([]);
  });

  it('lets through the bare Authorization: <token> form', async () => {
    const response = await fetch(`${prism.url}${API}/shop`, { headers: { authorization: t.token } });
    expect(response.status).toBe(200);
    expect(response.headers.has('sl-violations')).toBe(false);
  });

  it('refuses what the document refuses: a path id that is not an integer, a body without a required field', async () => {
    const byText = await fetch(`${prism.url}${API}/rewards/twelve`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(byText.status).toBe(422);
    expect(await byText.text()).toMatch(/path parameter id must be integer/);
    const incomplete = await fetch(`${prism.url}${API}/points_events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'manual', points_amount: 10 }),
    });
    expect(incomplete.status).toBe(422);
    expect(await incomplete.text()).toMatch(/customer_identifier/);
  });
});
