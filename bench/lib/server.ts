import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Benchmarks measure the real server: a child process running `loyalty serve`, as deployed.
// The tests that need a real process (first run, shutdown, kill -9) start it the same way.

/** The compiled CLI, whether this file runs compiled (dist/bench/lib) or from source (bench/lib). */
function findMain(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, 'dist', 'src', 'main.js');
}

export const MAIN = findMain();

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

export interface StartOptions {
  /** Collect stdout and stderr (see `output()`) instead of passing them through. */
  capture?: boolean;
  cwd?: string;
  /** Arguments of `loyalty serve` (e.g. `--workers auto`). */
  args?: string[];
  /** How long it may take to answer /readyz; default 30 s. */
  readyTimeoutMs?: number;
}

export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** What the process printed so far, when started with `capture`. */
  output(): { stdout: string; stderr: string };
  /** Peak resident set size so far, in bytes (VmHWM). */
  peakRss(): number;
  stop(): Promise<void>;
}

/**
 * Node's own flags for the server, as `npm start` runs it (package.json): a 256 MB heap, so
 * that V8 collects before it grows, and the process stays under 300 MB RSS when overloaded
 * (without it, V8 let 500 connections' garbage take it to 380 MB); and young generation
 * semi-spaces of 8 MB instead of 16, which kept the overloaded process at 256-259 MB where it
 * had reached 273-299 MB once shed requests became cheap enough to be taken in by thousands
 * a second.
 */
export const SERVE_NODE_ARGS = ['--max-old-space-size=256', '--max-semi-space-size=8'];

/**
 * Starts `loyalty serve` on DATABASE_URL (null: the default database, relative to `cwd`) and
 * waits until /readyz answers.
 */
export async function startServer(databaseUrl: string | null, env: Record<string, string> = {}, options: StartOptions = {}): Promise<ServerProcess> {
  const port = await freePort();
  const inherited: Record<string, string | undefined> = { ...process.env };
  delete inherited.DATABASE_URL;
  const child = spawn(process.execPath, [...SERVE_NODE_ARGS, MAIN, 'serve', ...(options.args ?? [])], {
    cwd: options.cwd,
    env: {
      ...inherited,
      ...(databaseUrl === null ? {} : { DATABASE_URL: databaseUrl }),
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LOYALTY_BOOTSTRAP: 'false',
      RATE_LIMIT_MAX: '100000000',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env,
    },
    stdio: ['ignore', options.capture ? 'pipe' : 'inherit', options.capture ? 'pipe' : 'inherit'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out.stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (out.stderr += chunk));
  const url = `http://127.0.0.1:${port}`;
  const readyMs = options.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}${out.stderr ? `: ${out.stderr}` : ''}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready in ${readyMs / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    child,
    output: () => ({ ...out }),
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

/** A reference server of bench/lib (`script`, compiled beside this file), in a process of its own; it answers on every path. */
export async function startReference(script: string, args: string[]): Promise<{ url: string; pid: number; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(path.dirname(fileURLToPath(import.meta.url)), script), String(port), ...args], { stdio: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}
