import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_DIALECT } from '../helpers/database.js';
import { freshDatabase, seedShop, start } from '../helpers/server.js';
import { createCustomer, expectExactlyOnce, recoveryMs, startWriteLoad, summary, type Answer } from './load.js';
import { ownPostgres, ownPostgresUnavailable } from './own-postgres.js';

// PostgreSQL going away under a steady keyed write load, against a real `loyalty serve`: its
// connections cut (pg_terminate_backend, only of this test's own database: the server is
// shared), and the server itself stopped and restarted (an instance of the test's own). The
// process lives on, every request is answered (503 with Retry-After while the database is
// unreachable, never 500), the pool recovers by itself, /readyz says what is going on, and
// every acknowledged write is stored exactly once.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readyz(base: string): Promise<{ status: number; ms: number; body: any; retryAfter: string | null }> {
  const sent = performance.now();
  const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, ms: performance.now() - sent, body: await res.json(), retryAfter: res.headers.get('retry-after') };
}

const during = (answers: readonly Answer[], from: number, to: number) => answers.filter((a) => a.at >= from && a.at < to);

describe.runIf(TEST_DIALECT === 'postgres')('PostgreSQL faults under write load (postgres)', () => {
  it('survives its connections being terminated every 2 s: no 500, no exit, recovered within seconds, exactly once', async () => {
    const url = await freshDatabase();
    const token = await seedShop(url);
    const server = await start(url, {}, { capture: true });
    await createCustomer(server.url, token, 1);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const load = startWriteLoad(server.url, token, 1);
    const kills: number[] = [];
    let terminated = 0;
    try {
      for (let i = 0; i < 5; i++) {
        await sleep(2000);
        kills.push(performance.now() - load.started);
        // Only this test's own database: other tests share the server.
        const { rows } = await admin.query(
          'select count(pg_terminate_backend(pid)) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
        );
        terminated += Number(rows[0].n);
      }
      await sleep(2000);
    } finally {
      await admin.end();
    }
    const report = await load.stop();
    expect(server.child.exitCode).toBeNull();
    expect(server.child.signalCode).toBeNull();
    expect(terminated).toBeGreaterThanOrEqual(5);
    const recoveries = kills.map((k) => Math.round(recoveryMs(report.answers, k)));
    console.log(summary('pg_terminate_backend x5', report.answers, { terminated, recoveries_ms: recoveries, acknowledged: report.acknowledged.size }));
    for (const ms of recoveries) expect(ms).toBeLessThan(3000);
    expect((await readyz(server.url)).status).toBe(200);
    await expectExactlyOnce(server.url, token, url, 1, report);
  });

  const unavailable = ownPostgresUnavailable();
  it.skipIf(unavailable !== null)(
    `survives PostgreSQL stopped for 2 s and restarted: 503 with Retry-After meanwhile, /readyz 503, back by itself${unavailable ? ` (skipped: ${unavailable})` : ''}`,
    async () => {
      const instance = await ownPostgres();
      try {
        const token = await seedShop(instance.url);
        const server = await start(instance.url, {}, { capture: true });
        await createCustomer(server.url, token, 1);
        const load = startWriteLoad(server.url, token, 1);
        await sleep(2000);

        const down = performance.now() - load.started;
        await instance.stop();
        const probes = [];
        for (let i = 0; i < 8; i++) {
          probes.push(await readyz(server.url));
          await sleep(250);
        }
        const up = performance.now() - load.started;
        await instance.start();
        let readyAgain = Infinity;
        for (const deadline = performance.now() + 5000; performance.now() < deadline; await sleep(50)) {
          if ((await readyz(server.url)).status === 200) {
            readyAgain = performance.now() - load.started - up;
            break;
          }
        }
        await sleep(1500);
        const restarted = performance.now() - load.started;
        await instance.restart();
        await sleep(2000);
        const report = await load.stop();

        expect(server.child.exitCode).toBeNull();
        expect(server.child.signalCode).toBeNull();
        for (const probe of probes) {
          expect(probe.status).toBe(503);
          expect(probe.body.error).toMatchObject({ type: 'api_error', code: 'unavailable' });
          expect(Number(probe.retryAfter)).toBeGreaterThan(0);
          expect(probe.ms).toBeLessThan(2500);
        }
        const whileDown = during(report.answers, down + 500, up);
        expect(whileDown.length).toBeGreaterThan(0);
        expect(whileDown.every((a) => a.status === 503)).toBe(true);
        const figures = {
          down_ms: Math.round(up - down),
          readyz_back_ms: Math.round(readyAgain),
          writes_back_ms: Math.round(recoveryMs(report.answers, up)),
          after_restart_ms: Math.round(recoveryMs(report.answers, restarted)),
          acknowledged: report.acknowledged.size,
        };
        console.log(summary('PostgreSQL stopped 2 s, then restarted', report.answers, figures));
        console.log(summary('  while it was down', whileDown));
        expect(readyAgain).toBeLessThan(3000);
        expect(figures.writes_back_ms).toBeLessThan(3000);
        expect(figures.after_restart_ms).toBeLessThan(3000);
        await expectExactlyOnce(server.url, token, instance.url, 1, report);
      } finally {
        await instance.remove();
      }
    },
  );
});
