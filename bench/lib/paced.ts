import { Pool } from 'undici';

// An open-loop load: requests sent at a fixed rate whatever the answers' speed, each one's
// latency counted from when it was due (so a stall is not hidden by waiting for it), for a
// latency at a given throughput, which wrk (closed-loop) cannot hold.

export interface PacedResult {
  rate: number;
  sent: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

export async function paced(url: string, path: string, headers: Record<string, string>, rate: number, seconds: number, connections = 8): Promise<PacedResult> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let non2xx = 0;
  const start = performance.now();
  const total = Math.floor(rate * seconds);
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      pool.request({ method: 'GET', path, headers }).then(async (res) => {
        await res.body.dump();
        if (res.statusCode >= 300) non2xx++;
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inFlight);
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { rate, sent: total, p50Ms: at(0.5), p99Ms: at(0.99), non2xx };
}
