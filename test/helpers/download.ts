import fs from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { API } from './app.js';

// A slow client of a real server, and the server's memory: the exports' memory tests.

/** How fast the client reads: slower than the server writes, on either database. */
const READ_BYTES_PER_SECOND = 8 * 1024 * 1024;

/** The process's resident set size now, in bytes. */
export function rss(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return kb ? Number(kb[1]) * 1024 : 0;
}

export async function send(base: string, token: string, method: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${base}${API}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

export interface Download {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** GET `path` on a connection of its own, read a chunk at a time at READ_BYTES_PER_SECOND at most. */
export function readSlowly(base: string, token: string, path: string): Promise<Download> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${API}${path}`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
        void (async () => {
          const chunks: Buffer[] = [];
          let received = 0;
          const started = performance.now();
          for await (const chunk of res as AsyncIterable<Buffer>) {
            chunks.push(chunk);
            received += chunk.length;
            const ahead = (received / READ_BYTES_PER_SECOND) * 1000 - (performance.now() - started);
            if (ahead > 0) await sleep(ahead);
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
        })().catch(reject);
      })
      .on('error', reject);
  });
}

/** readSlowly, sampling the server's RSS every 50 ms: the download and the highest RSS seen, from its start to its end. */
export async function readSlowlyWithPeak(base: string, token: string, path: string, pid: number): Promise<{ download: Download; peak: number }> {
  let peak = rss(pid);
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 50);
  try {
    const download = await readSlowly(base, token, path);
    return { download, peak: Math.max(peak, rss(pid)) };
  } finally {
    clearInterval(sampler);
  }
}
