import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { seedShop, start } from '../helpers/server.js';
import { createCustomer, expectExactlyOnce, recoveryMs, startWriteLoad, summary } from './load.js';

// SQLite on a full disk, under a steady keyed write load, against a real `loyalty serve`: the
// database file lives on a small tmpfs of the test's own, which a ballast file fills. Writes
// answer 503 in the error shape (SQLite rolled the transaction back; nothing is half written),
// reads go on, and once the ballast is removed writes succeed again without a restart.
// Mounting needs root (CI runs as root); elsewhere the test says so and is skipped.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isRoot = process.getuid?.() === 0;

/** Writes a file until the file system is full; returns its size. */
function fillUp(file: string): number {
  const chunk = Buffer.alloc(16 * 1024, 1);
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  try {
    for (;;) bytes += fs.writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
  return bytes;
}

describe.runIf(TEST_DIALECT === 'sqlite')('SQLite on a full disk (sqlite)', () => {
  it.skipIf(!isRoot)(
    `answers writes 503 while the disk is full, keeps reading, and writes again once space is freed${isRoot ? '' : ' (skipped: mounting a tmpfs needs root)'}`,
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', dir]);
      try {
        const url = `sqlite:${path.join(dir, 'loyalty.db')}`;
        const token = await seedShop(url);
        const server = await start(url, {}, { capture: true });
        try {
          await createCustomer(server.url, token, 1);
          const load = startWriteLoad(server.url, token, 1);
          await sleep(1000);
          const ballast = path.join(dir, 'ballast');
          const full = performance.now() - load.started;
          fillUp(ballast);
          // Until SQLite needs a page the disk no longer has (the WAL reuses its own first).
          for (const deadline = performance.now() + 20_000; performance.now() < deadline; await sleep(100)) {
            if (load.report.answers.filter((a) => a.status === 503).length >= 20) break;
          }
          const read = await fetch(`${server.url}${API}/customers/1`, { headers: { authorization: `Bearer ${token}` } });
          const freed = performance.now() - load.started;
          fs.rmSync(ballast);
          await sleep(2000);
          const report = await load.stop();

          expect(server.child.exitCode).toBeNull();
          expect(read.status).toBe(200);
          const whileFull = report.answers.filter((a) => a.at >= full && a.at < freed);
          expect(whileFull.filter((a) => a.status === 503).length).toBeGreaterThanOrEqual(20);
          expect(whileFull.every((a) => a.status === 201 || a.status === 503)).toBe(true);
          const back = Math.round(recoveryMs(report.answers, freed));
          console.log(
            summary('SQLite disk full', report.answers, {
              full_for_ms: Math.round(freed - full),
              writes_back_ms: back,
              acknowledged: report.acknowledged.size,
            }),
          );
          console.log(summary('  while full', whileFull));
          expect(back).toBeLessThan(3000);
          await expectExactlyOnce(server.url, token, url, 1, report);
        } finally {
          await server.stop();
        }
      } finally {
        execFileSync('umount', [dir]);
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
