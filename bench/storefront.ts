import fs from 'node:fs';
import os from 'node:os';
import { gzipSync } from 'node:zlib';
import { SignJWT } from 'jose';
import { connect } from '../src/db/connect.js';
import { TRANSLATIONS } from '../panel/src/i18n/index.js';
import { PANEL_BUNDLE } from '../src/storefront/panel-routes.js';
import type { Benchmark } from './index.js';
import { paced } from './lib/paced.js';
import { benchShop, scratchDatabase } from './lib/scratch.js';
import { startReference, startServer } from './lib/server.js';
import { wrk, wrkAvailable } from './lib/wrk.js';

// `npm run bench -- storefront`: GET /storefront_api/v1/me over HTTP (wrk, 8 connections, 10 s
// after a 3 s warm-up) beside, in the same run, a bare Fastify route that verifies the same
// customer token with the same library and reads the same customer's row raw (lib/raw-me.ts).
// Targets: at least 0.8 of the reference's requests per second, and a p99 under 10 ms at half
// the reference's throughput (an open-loop load at a fixed rate, lib/paced.ts). Also prints the
// panel's gzipped size with every built-in translation (at most 25 KB). SQLite, where the reference can read the file raw.

const CUSTOMERS = 10_000;
const SECONDS = 10;
const WARMUP_SECONDS = 3;
const CONNECTIONS = 8;
const TARGET_RATIO = 0.8;
const TARGET_P99_MS = 10;
const PANEL_MAX_GZIPPED = 25 * 1024;

async function run(): Promise<void> {
  if (!wrkAvailable()) throw new Error('wrk is not installed (apt-get install -y wrk)');
  const scratch = await scratchDatabase('sqlite', 'storefront');
  const database = connect(scratch.url);
  try {
    const now = Date.now();
    const { shop, token } = await benchShop(database, CUSTOMERS, now);
    await database.close();
    const server = await startServer(scratch.url, {
      EXPIRY_SWEEP_INTERVAL_MS: '0',
      STOREFRONT_RATE_LIMIT_CUSTOMER_MAX: '100000000',
      STOREFRONT_RATE_LIMIT_ADDRESS_MAX: '100000000',
    });
    const api = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${server.url}/merchant_api/v1/${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { data: Record<string, unknown> };
    };
    try {
      // The customer holds lots expiring at several instants, and the shop has tiers: /me shows it all.
      const customer = 4242;
      await api('PATCH', 'shop', { points_expiry_days: 365 });
      await api('POST', 'points_events/batch', {
        points_events: Array.from({ length: 20 }, (_, i) => ({
          customer_identifier: String(customer),
          source: 'manual',
          points_amount: 100 + i,
          applied_at: new Date(Date.now() - (i + 1) * 86_400_000).toISOString(),
        })),
      });
      await api('POST', 'vip_tiers', { name: 'Silver', points_threshold: 1000 });
      await api('POST', 'vip_tiers', { name: 'Gold', points_threshold: 5000 });
      const key = (await api('POST', 'storefront_keys', { allowed_origins: [] })).data as { publishable_key: string; secret: string };
      const iat = Math.floor(Date.now() / 1000);
      const customerToken = await new SignJWT({ sub: String(customer), iat, exp: iat + 3600 })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.publishable_key })
        .sign(new TextEncoder().encode(key.secret));
      const reference = await startReference('raw-me.js', [scratch.url.slice('sqlite:'.length), String(shop.id), key.secret]);
      try {
        const measure = (url: string, pid: number) =>
          wrk(url, customerToken, '"/storefront_api/v1/me"', SECONDS, CONNECTIONS, { warmupSeconds: WARMUP_SECONDS, pid });
        const ref = await measure(reference.url, reference.pid);
        const me = await measure(server.url, server.child.pid!);
        const rate = Math.round(ref.rps / 2);
        const latency = await paced(server.url, '/storefront_api/v1/me', { authorization: `Bearer ${customerToken}` }, rate, SECONDS);
        const ratio = me.rps / ref.rps;
        const gzipped = gzipSync(fs.readFileSync(PANEL_BUNDLE)).length;
        const row = (name: string, r: typeof me) =>
          `  ${name.padEnd(34)}${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(6)} ms` +
          `${r.cpuUsPerRequest === null ? '' : `   CPU ${r.cpuUsPerRequest.toFixed(0).padStart(4)} µs/req`}${r.non2xx ? `   NON-2XX ${r.non2xx}` : ''}`;
        process.stdout.write(
          [
            `storefront on sqlite: GET /me of one customer with 20 lots, ${CUSTOMERS.toLocaleString('en-US')} customers; wrk, ${CONNECTIONS} connections, ${SECONDS} s; load ${os
              .loadavg()
              .map((l) => l.toFixed(2))
              .join(' ')}`,
            row('reference (jose + raw row)', ref),
            row('GET /storefront_api/v1/me', me),
            `  ratio ${ratio.toFixed(2)} (target >= ${TARGET_RATIO})  ${ratio >= TARGET_RATIO ? 'ok' : 'BELOW TARGET'}`,
            `  at ${rate} req/s (half the reference), open loop: p50 ${latency.p50Ms.toFixed(2)} ms, p99 ${latency.p99Ms.toFixed(2)} ms (target < ${TARGET_P99_MS} ms; ` +
              `the generator's own CPU ${latency.generatorCpuUs.toFixed(0)} µs/req)  ` +
              `${latency.p99Ms < TARGET_P99_MS && latency.non2xx === 0 ? 'ok' : 'ABOVE TARGET'}${latency.non2xx ? `, NON-2XX ${latency.non2xx}` : ''}`,
            `  panel: ${gzipped} bytes gzipped with every translation (${Object.keys(TRANSLATIONS).join(' ')}; at most ${PANEL_MAX_GZIPPED})  ` +
              `${gzipped <= PANEL_MAX_GZIPPED ? 'ok' : 'ABOVE TARGET'}`,
            '',
          ].join('\n'),
        );
      } finally {
        reference.stop();
      }
    } finally {
      await server.stop();
    }
  } finally {
    await scratch.drop();
  }
}

export const storefront: Benchmark = {
  description: 'GET /storefront_api/v1/me vs a bare Fastify route verifying the same JWT and reading the row raw; p99 at half that rate; panel size',
  run: async () => run(),
};
