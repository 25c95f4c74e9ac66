import os from 'node:os';
import { eachDialect, type BenchDialect, type Benchmark } from './lib/benchmark.js';
import { startNeighbour } from './lib/neighbour.js';
import { scratchDatabase } from './lib/scratch.js';
import { startServer } from './lib/server.js';
import { load, percentile, seed, served, type Sample } from './overload.js';

// `npm run bench -- neighbour [sqlite|postgres]`: the overload benchmark's request mix (list
// pages of 25; batches of 1000 grants) from one client and from 10, each sending its next
// request when it has an answer, against a real `loyalty serve` with its default limits: on a
// quiet machine and beside a neighbour (a process spinning on every core and one writing 64 MB
// files with fsync), in one run. Targets: no request shed beside the neighbour, and p99 beside it
// within 5x of quiet.
//
// Each mix runs quiet for half its time, then beside the neighbour for all of it, then quiet for
// the other half: the quiet samples are taken as much before as after those beside it. The
// database grows under the mix (10,000 grants a second at first), and its batches slow with it:
// measured in a row on a quiet machine, one client's p99 went 57, 95, 139 ms in its first, second
// and third 10 s with the 10 clients' mix between. Quiet first and beside after, as the benchmark
// ran at first, counted that growth as the neighbour's.

const SECONDS = 10;
const MIXES = [1, 10] as const;

interface Run {
  connections: number;
  /** Quiet, before and after the samples beside the neighbour. */
  before: Sample[];
  after: Sample[];
  busy: Sample[];
}

const p99 = (samples: Sample[]) => percentile([...served(samples, 'list'), ...served(samples, 'batch')], 99);
const shed = (samples: Sample[]) => samples.filter((s) => s.status === 503).length;

function report(dialect: string, runs: Run[], shedTotal: string): string {
  const lines = [
    `neighbour on ${dialect}: ${SECONDS} s per mix, quiet before and after, beside ${os.availableParallelism()} CPU hogs and a disk writer with fsync`,
  ];
  for (const { connections, before, after, busy } of runs) {
    const quiet = [...before, ...after];
    const ratio = p99(busy) / p99(quiet);
    lines.push(
      `  ${String(connections).padStart(2)} connection(s): quiet ${quiet.length} requests p99 ${p99(quiet).toFixed(1)} ms (before ${p99(before).toFixed(1)}, after ${p99(after).toFixed(1)}); beside the neighbour ${busy.length} requests p99 ${p99(busy).toFixed(1)} ms`,
      `     shed beside the neighbour ${shed(busy)} (target 0) ${shed(busy) === 0 ? 'ok' : 'ABOVE TARGET'};  p99 ratio ${ratio.toFixed(2)} (target ≤ 5) ${ratio <= 5 ? 'ok' : 'ABOVE TARGET'};  no answer ${busy.filter((s) => s.status === 0).length}`,
    );
  }
  lines.push(`  server's shed counter: ${shedTotal || 'none'}`, '');
  return lines.join('\n');
}

async function runDialect(dialect: BenchDialect): Promise<void> {
  const scratch = await scratchDatabase(dialect, 'neighbour');
  try {
    const token = await seed(scratch.url);
    const server = await startServer(scratch.url, { MAX_EVENT_LOOP_DELAY_MS: '', EXPIRY_SWEEP_INTERVAL_MS: '0' });
    const runs: Run[] = [];
    let shedTotal: string;
    try {
      for (const connections of MIXES) {
        const before = await load(server.url, token, connections, SECONDS / 2);
        const neighbour = startNeighbour({ seconds: SECONDS + 30 });
        let busy: Sample[];
        try {
          busy = await load(server.url, token, connections, SECONDS);
        } finally {
          await neighbour.stop();
        }
        const after = await load(server.url, token, connections, SECONDS / 2);
        runs.push({ connections, before, after, busy });
      }
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      shedTotal = metrics
        .split('\n')
        .filter((l) => l.startsWith('http_requests_shed_total{'))
        .join(', ');
    } finally {
      await server.stop();
    }
    process.stdout.write(report(dialect, runs, shedTotal));
  } finally {
    await scratch.drop();
  }
}

export const neighbour: Benchmark = {
  description: 'one and 10 clients, quiet and beside CPU hogs and a disk writer: shed requests (target 0), p99 ratio (target ≤ 5) [sqlite|postgres]',
  async run(args) {
    await eachDialect(args, runDialect);
  },
};
