import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** The slowest request. */
  maxMs: number;
  non2xx: number;
  requests: number;
  /** CPU time (user + system) the server process spent per request, when its pid was given. */
  cpuUsPerRequest: number | null;
}

export interface WrkOptions {
  /** A run of this length first, not measured: JIT, caches and connections warm up. */
  warmupSeconds?: number;
  /** The server's process, to report its CPU time per request (steadier than req/s on a busy machine). */
  pid?: number;
  /** Send each request with this method and the JSON body made by this Lua expression (default: GET, no body). */
  body?: { method: 'POST' | 'PUT'; expr: string };
}

/** CPU time of a process so far, in µs (Linux /proc; null elsewhere). */
function cpuUs(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1e6) / 100;
  } catch {
    return null;
  }
}

export function wrkAvailable(): boolean {
  return fs.existsSync('/usr/bin/wrk') || fs.existsSync('/usr/local/bin/wrk');
}

/**
 * Runs wrk for `seconds` at `connections` (after a warm-up run when asked), each request's
 * path made by the Lua expression `pathExpr` (math.random is seeded per thread), and its JSON
 * body, for a POST or PUT, by `options.body`.
 */
export async function wrk(
  url: string,
  token: string | null,
  pathExpr: string,
  seconds: number,
  connections: number,
  options: WrkOptions = {},
): Promise<WrkResult> {
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wrk-')), 'paths.lua');
  fs.writeFileSync(
    script,
    [
      'local counter = 0',
      'function setup(thread) counter = counter + 1; thread:set("seed", counter) end',
      'function init(args) math.randomseed(os.time() + seed * 7919) end',
      ...(token ? [`wrk.headers["Authorization"] = "Bearer ${token}"`] : []),
      ...(options.body
        ? [
            'wrk.headers["Content-Type"] = "application/json"',
            `request = function() return wrk.format("${options.body.method}", ${pathExpr}, nil, ${options.body.expr}) end`,
          ]
        : [`request = function() return wrk.format("GET", ${pathExpr}) end`]),
      'done = function(summary, latency, requests)',
      '  io.write(string.format("P50 %d\\nP99 %d\\nMAX %d\\nREQUESTS %d\\n", latency:percentile(50), latency:percentile(99), latency.max, summary.requests))',
      'end',
    ].join('\n'),
  );
  const runWrk = (s: number) =>
    run('wrk', ['-t', String(Math.min(2, connections)), '-c', String(connections), '-d', `${s}s`, '-s', script, url], { maxBuffer: 1 << 20 });
  if (options.warmupSeconds) await runWrk(options.warmupSeconds);
  const cpuBefore = options.pid === undefined ? null : cpuUs(options.pid);
  const { stdout } = await runWrk(seconds);
  const cpuAfter = options.pid === undefined ? null : cpuUs(options.pid);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p50 = Number(/P50 (\d+)/.exec(stdout)?.[1]) / 1000;
  const p99 = Number(/P99 (\d+)/.exec(stdout)?.[1]) / 1000;
  const maxMs = Number(/MAX (\d+)/.exec(stdout)?.[1]) / 1000;
  const requests = Number(/REQUESTS (\d+)/.exec(stdout)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  const cpuUsPerRequest = cpuBefore !== null && cpuAfter !== null && requests > 0 ? (cpuAfter - cpuBefore) / requests : null;
  return { rps, p50Ms: p50, p99Ms: p99, maxMs, non2xx, requests, cpuUsPerRequest };
}
