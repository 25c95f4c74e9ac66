import { describe, expect, it } from 'vitest';
import { startNeighbour } from '../../bench/lib/neighbour.js';
import { API } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, seedShop, start } from '../helpers/server.js';

// A busy machine is not an overloaded server. Beside processes that take every core and one
// that writes large files with fsync, a fresh `loyalty serve` with its default limits serves
// clients that send one request at a time (and a few at once, fewer than the floor of
// http/overload.ts) without one 503, from the first request after it is ready. The neighbour
// runs while the server starts and while it serves, and ends by itself if the test dies.

const SECONDS = 4;

interface Tally {
  statuses: Record<number, number>;
  requests: number;
  /** The first answer that was not 2xx, for the failure's message. */
  refused?: string;
}

/** One client: a mix of reads and writes, each sent when the last was answered, for `ms`. */
async function client(base: string, token: string, n: number, ms: number, tally: Tally): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const until = performance.now() + ms;
  for (let i = 0; performance.now() < until; i++) {
    const customer = String(n * 100_000 + Math.floor(i / 4) + 1);
    const requests: [string, RequestInit][] = [
      [`${API}/customers/${customer}`, { method: 'PUT', headers, body: JSON.stringify({ email: `${customer}@example.com`, first_name: 'Ada' }) }],
      [`${API}/points_events`, { method: 'POST', headers, body: JSON.stringify({ customer_identifier: customer, source: 'manual', points_amount: 5 }) }],
      [`${API}/customers/${customer}`, { headers: { authorization: token } }],
      [`${API}/customers?pagination[limit]=25`, { headers: { authorization: `Bearer ${token}` } }],
    ];
    const [path, init] = requests[i % requests.length]!;
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    if (res.status >= 300) tally.refused ??= `${init.method ?? 'GET'} ${path}: ${res.status} ${text}`;
    tally.statuses[res.status] = (tally.statuses[res.status] ?? 0) + 1;
    tally.requests++;
  }
}

describe(`a busy machine (${TEST_DIALECT})`, () => {
  it('sheds nothing for one client, or three at once, beside a CPU hog and a disk-heavy writer', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const neighbour = startNeighbour({ seconds: 120 });
    try {
      // The server's own limits (the test helper turns the lag limit off).
      const server = await start(url, { MAX_EVENT_LOOP_DELAY_MS: '' });
      const alone: Tally = { statuses: {}, requests: 0 };
      await client(server.url, token, 0, SECONDS * 1000, alone);
      const together: Tally = { statuses: {}, requests: 0 };
      await Promise.all([1, 2, 3].map((n) => client(server.url, token, n, SECONDS * 1000, together)));

      for (const tally of [alone, together]) {
        expect(tally.statuses[503] ?? 0, JSON.stringify(tally.statuses)).toBe(0);
        expect(tally.refused).toBeUndefined();
      }
      expect(alone.requests).toBeGreaterThan(8);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).not.toMatch(/^http_requests_shed_total\{[^}]*\} [1-9]/m);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    } finally {
      await neighbour.stop();
    }
  });
});

describe(`bodies over the limit (${TEST_DIALECT})`, () => {
  const body = JSON.stringify({
    points_events: Array.from({ length: 100_000 }, (_, i) => ({ customer_identifier: String(i + 1), source: 'order', points_amount: 1 })),
  });

  it('answers a 100,000-event batch 413 in the error shape, every time, also while shedding every other request', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    // One request in flight at most: with a request held, every other one is shed.
    const server = await start(url, { MAX_REQUESTS_IN_FLIGHT: '1' });
    const post = () =>
      fetch(`${server.url}${API}/points_events/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
    expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
    for (let i = 0; i < 5; i++) {
      const res = await post();
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({
        error: { type: 'invalid_request_error', code: 'payload_too_large', request_id: res.headers.get('x-request-id') },
      });
    }
    const held = fetch(`${server.url}${API}/shop`, {
      method: 'PATCH',
      headers: { authorization: token, 'content-type': 'application/json' },
      body: slowBody(),
      duplex: 'half',
    } as RequestInit);
    await untilShedding(server.url, token);
    const answers = await Promise.all(Array.from({ length: 5 }, post));
    expect(answers.map((a) => a.status)).toEqual([413, 413, 413, 413, 413]);
    void held.catch(() => undefined);
  });
});

/** A body that sends one byte and then nothing for a minute: its request stays in flight. */
function slowBody(): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{'));
    },
  });
}

async function untilShedding(base: string, token: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const res = await fetch(`${base}${API}/shop`, { headers: { authorization: token } });
    await res.arrayBuffer();
    if (res.status === 503) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the server never shed a request');
}
