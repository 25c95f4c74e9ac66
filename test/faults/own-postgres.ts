import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../bench/lib/server.js';

// A throwaway PostgreSQL instance of the suite's own, in a temporary directory on a free port,
// for the faults that would hit everyone on a shared server (stopping and restarting it). As
// root (CI), its commands run as the `postgres` user, since initdb refuses root.

const run = promisify(execFile);
const BIN = process.env.POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';

export interface OwnPostgres {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops (fast: open sessions are terminated) and starts again. */
  restart(): Promise<void>;
  remove(): Promise<void>;
}

/** Why an instance of our own cannot be made here, or null when it can. */
export function ownPostgresUnavailable(): string | null {
  if (!fs.existsSync(path.join(BIN, 'initdb'))) return `no initdb in ${BIN} (set POSTGRES_BIN)`;
  if (process.getuid?.() === 0 && !fs.existsSync('/usr/sbin/runuser')) return 'running as root without runuser to become postgres';
  return null;
}

export async function ownPostgres(): Promise<OwnPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-own-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) fs.chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
  const pg = (command: string, ...args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(BIN, command), ...args]) : run(path.join(BIN, command), args);
  const port = await freePort();
  const data = path.join(dir, 'data');
  await pg('initdb', '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync');
  // The data need not survive a power loss; the test's acknowledged writes need survive only a restart.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const start = async () => void (await pg('pg_ctl', '-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start'));
  const stop = async () => void (await pg('pg_ctl', '-D', data, '-m', 'fast', '-w', 'stop'));
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async remove() {
      await pg('pg_ctl', '-D', data, '-m', 'immediate', '-w', 'stop').catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
