import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './server.js';

// A hot standby of the PostgreSQL cluster at `primaryUrl`, on a free port of this machine, for
// the read replicas' tests and benchmark (docs/scaling.md shows the same steps by hand):
// pg_basebackup -R into a folder of its own owned by postgres, then pg_ctl as postgres. The
// cluster's pg_hba.conf gets `host replication all 127.0.0.1/32 trust` when it lacks it. Debian
// keeps postgresql.conf and pg_hba.conf outside the data folder, so the standby gets its own.

const run = promisify(execFile);

/** Where pg_ctl and pg_basebackup are: PG_BIN, else Debian's folder for the server's major version. */
function binaries(major: number): string {
  return process.env.PG_BIN ?? `/usr/lib/postgresql/${major}/bin`;
}

/** As the postgres user when this runs as root (PostgreSQL refuses to run as root). */
async function asPostgres(file: string, args: string[]): Promise<string> {
  const root = process.getuid?.() === 0;
  const { stdout } = await run(root ? 'runuser' : file, root ? ['-u', 'postgres', '--', file, ...args] : args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Adds the replication line to the cluster's pg_hba.conf if missing, and reloads it. */
async function allowReplication(primaryUrl: string): Promise<void> {
  const [{ hba_file: file }] = (await query<{ hba_file: string }>(primaryUrl, 'show hba_file')) as [{ hba_file: string }];
  const line = 'host replication all 127.0.0.1/32 trust';
  const text = fs.readFileSync(file, 'utf8');
  if (text.split('\n').some((l) => l.trim().replace(/\s+/g, ' ') === line)) return;
  fs.appendFileSync(file, `${text.endsWith('\n') ? '' : '\n'}${line}\n`);
  await query(primaryUrl, 'select pg_reload_conf()');
}

export interface Standby {
  /** The standby's URL for the database the primary's URL names. */
  url: string;
  port: number;
  /** Stops it (fast shutdown); start() brings it back on the same port and folder. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Pauses or resumes the replay of WAL (pg_wal_replay_pause / _resume). */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  /** Stops it and removes its folder. */
  close(): Promise<void>;
}

/** Settings a hot standby must have at least as high as its primary's, or it does not start. */
const AT_LEAST_PRIMARY = ['max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction'];

export async function startStandby(primaryUrl: string): Promise<Standby> {
  await allowReplication(primaryUrl);
  const settings = await query<{ name: string; setting: string }>(
    primaryUrl,
    `select name, setting from pg_settings where name in (${[...AT_LEAST_PRIMARY, 'server_version_num'].map((n) => `'${n}'`).join(', ')})`,
  );
  const major = Math.floor(Number(settings.find((s) => s.name === 'server_version_num')!.setting) / 10000);
  const bin = binaries(major);
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-standby-'));
  fs.chmodSync(dir, 0o700);
  if (process.getuid?.() === 0) await run('chown', ['postgres:postgres', dir]);
  const primary = new URL(primaryUrl);
  const data = path.join(dir, 'data');
  const log = path.join(dir, 'standby.log');
  // --checkpoint=fast: the backup starts at once instead of at the primary's next checkpoint.
  await asPostgres(path.join(bin, 'pg_basebackup'), [
    '-R',
    '--checkpoint=fast',
    '-X',
    'stream',
    '-D',
    data,
    '-h',
    primary.hostname,
    '-p',
    primary.port || '5432',
    '-U',
    'postgres',
  ]);
  const conf = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    'hot_standby = on',
    'shared_buffers = 16MB',
    // A query the replay conflicts with waits this long, then is cancelled (the default is 30 s).
    'max_standby_streaming_delay = 1s',
    ...settings.filter((s) => AT_LEAST_PRIMARY.includes(s.name)).map((s) => `${s.name} = ${s.setting}`),
  ];
  fs.writeFileSync(path.join(data, 'postgresql.conf'), `${conf.join('\n')}\n`);
  fs.writeFileSync(path.join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
  fs.writeFileSync(path.join(data, 'pg_ident.conf'), '');
  if (process.getuid?.() === 0) await run('chown', ['-R', 'postgres:postgres', dir]);
  const pgCtl = (...args: string[]) => asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const url = new URL(primaryUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const standby: Standby = {
    url: url.toString(),
    port,
    start: async () => {
      await pgCtl('-l', log, '-w', '-t', '60', 'start');
    },
    stop: async () => {
      await pgCtl('-m', 'fast', '-w', 'stop');
    },
    pauseReplay: async () => void (await query(standby.url, 'select pg_wal_replay_pause()')),
    resumeReplay: async () => void (await query(standby.url, 'select pg_wal_replay_resume()')),
    close: async () => {
      await pgCtl('-m', 'immediate', '-w', 'stop').catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await standby.start();
  } catch (error) {
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').slice(-2000) : '';
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`the standby did not start: ${(error as Error).message}\n${text}`);
  }
  return standby;
}
