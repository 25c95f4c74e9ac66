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
  non2xx: number;
}

export function wrkAvailable(): boolean {
  return fs.existsSync('/usr/bin/wrk') || fs.existsSync('/usr/local/bin/wrk');
}


/**
 * Runs wrk for `seconds` at `connections`, each request's path made by the Lua expression
 * `pathExpr` (math.random is seeded per thread).
 */
export async function wrk(url: string, token: string | null, pathExpr: string, seconds: number, connections: number): Promise<WrkResult> {
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wrk-')), 'paths.lua');
  fs.writeFileSync(
    script,
    [
      'local counter = 0',
      'function setup(thread) counter = counter + 1; thread:set("seed", counter) end',
      'function init(args) math.randomseed(os.time() + seed * 7919) end',
      ...(token ? [`wrk.headers["Authorization"] = "Bearer ${token}"`] : []),
      `request = function() return wrk.format("GET", ${pathExpr}) end`,
      'done = function(summary, latency, requests)',
      '  io.write(string.format("P50 %d\\nP99 %d\\n", latency:percentile(50), latency:percentile(99)))',
      'end',
    ].join('\n'),
  );
  const { stdout } = await run('wrk', ['-t', '2', '-c', String(connections), '-d', `${seconds}s`, '-s', script, url], { maxBuffer: 1 << 20 });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p50 = Number(/P50 (\d+)/.exec(stdout)?.[1]) / 1000;
  const p99 = Number(/P99 (\d+)/.exec(stdout)?.[1]) / 1000;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
  return { rps, p50Ms: p50, p99Ms: p99, non2xx };
}
