import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Benchmarks measure the real server: a child process running `loyalty serve`, as deployed.

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/main.js');

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Peak resident set size so far, in bytes (VmHWM). */
  peakRss(): number;
  stop(): Promise<void>;
}

/** Starts `loyalty serve` on DATABASE_URL and waits until /readyz answers. */
export async function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN, 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LOYALTY_BOOTSTRAP: 'false',
      RATE_LIMIT_MAX: '100000000',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('server did not become ready in 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    child,
    peakRss() {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = /VmHWM:\s+(\d+) kB/.exec(status);
      return kb ? Number(kb[1]) * 1024 : 0;
    },
    stop() {
      return new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}

export function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(0)} MB`;
}
