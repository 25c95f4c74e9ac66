import { execFile } from 'node:child_process';
import { expect } from 'vitest';
import { MAIN } from '../../bench/lib/server.js';
import { API } from '../helpers/app.js';

// A steady write load for fault injection: workers each send keyed POST /points_events, one
// key at a time, retried until acknowledged (a 201), as a careful client does. Every answer
// is recorded with its time, so that a test can say what was answered during a fault and how
// soon writes succeeded again after it. Every answer that is not a 201 must be in the error
// shape (with Retry-After on a 503); a request that gets no answer at all is counted.

export interface Answer {
  /** ms since the load began. */
  at: number;
  /** HTTP status; 0 when no answer came (the connection failed or nothing arrived in time). */
  status: number;
  ms: number;
}

export interface LoadReport {
  answers: Answer[];
  /** Idempotency key → the id of the event its 201 named. */
  acknowledged: Map<string, number>;
  /** Answers that broke the contract: a 500, an error outside the documented shape, a 503 without Retry-After. */
  violations: string[];
}

export interface Load {
  readonly started: number;
  readonly report: LoadReport;
  /** Stops starting new keys, waits until every key begun is acknowledged, and reports. */
  stop(): Promise<LoadReport>;
}

/** Longest wait for one answer: past it the request counts as unanswered. */
const ANSWER_TIMEOUT_MS = 5000;
/** How long after stop() a key still being retried may take to be acknowledged. */
const GIVE_UP_MS = 10_000;
/** Pause before retrying a key that was not acknowledged. */
const RETRY_PAUSE_MS = 100;

async function attempt(base: string, token: string, key: string, body: string): Promise<{ status: number; text: string; headers: Headers | null }> {
  try {
    const res = await fetch(`${base}${API}/points_events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
      body,
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    return { status: res.status, text: await res.text(), headers: res.headers };
  } catch {
    return { status: 0, text: '', headers: null };
  }
}

function contractBroken(status: number, text: string, headers: Headers | null): string | null {
  if (status === 0 || status === 201) return null;
  if (status === 500) return `500: ${text}`;
  let error: { code?: unknown; request_id?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(text).error;
  } catch {
    return `${status} not JSON: ${text.slice(0, 200)}`;
  }
  if (typeof error?.code !== 'string' || typeof error.message !== 'string' || error.request_id !== headers?.get('x-request-id'))
    return `${status} not in the error shape: ${text}`;
  if (status === 503 && !(Number(headers?.get('retry-after')) > 0)) return `503 without Retry-After: ${text}`;
  return null;
}

/** Starts `workers` writers granting 1 point each to the customer `customerRemoteId`. */
export function startWriteLoad(base: string, token: string, customerRemoteId: number, workers = 6, prefix = 'fault'): Load {
  const started = performance.now();
  const report: LoadReport = { answers: [], acknowledged: new Map(), violations: [] };
  const body = JSON.stringify({ customer_identifier: String(customerRemoteId), source: 'manual', points_amount: 1 });
  let stopping = false;
  let giveUpAt = Infinity;
  const worker = async (w: number) => {
    for (let n = 0; !stopping; n++) {
      const key = `${prefix}-${w}-${n}`;
      for (;;) {
        if (performance.now() > giveUpAt) {
          report.violations.push(`${key} was never acknowledged`);
          return;
        }
        const sent = performance.now();
        const { status, text, headers } = await attempt(base, token, key, body);
        report.answers.push({ at: sent - started, status, ms: performance.now() - sent });
        const broken = contractBroken(status, text, headers);
        if (broken !== null) report.violations.push(broken);
        if (status === 201) {
          report.acknowledged.set(key, JSON.parse(text).data.id);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  };
  const running = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  return {
    started,
    report,
    async stop() {
      stopping = true;
      giveUpAt = performance.now() + GIVE_UP_MS;
      await running;
      return report;
    },
  };
}

/** How many answers of each status (0: none came). */
export function statusCounts(answers: readonly Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** ms from `from` (load time) to the first 201 sent at or after it. */
export function recoveryMs(answers: readonly Answer[], from: number): number {
  const first = answers.filter((a) => a.status === 201 && a.at >= from).reduce((min, a) => Math.min(min, a.at + a.ms), Infinity);
  return first - from;
}

/** `loyalty verify --json` on the database: the ledger's invariants, checked by the CLI. */
export function verify(databaseUrl: string): Promise<{ ok: boolean; discrepancies: unknown[] }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [MAIN, 'verify', '--json'],
      { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } },
      (error, stdout, stderr) => {
        if (error && !stdout) return reject(new Error(`loyalty verify failed: ${stderr}`));
        resolve(JSON.parse(stdout));
      },
    );
  });
}

/** A one-line summary of a fault's figures, printed for the report. */
export function summary(name: string, answers: readonly Answer[], extra: Record<string, unknown> = {}): string {
  const slowest = Math.round(answers.reduce((max, a) => Math.max(max, a.ms), 0));
  return `[fault] ${name}: ${answers.length} answers ${JSON.stringify(statusCounts(answers))}, slowest ${slowest} ms ${JSON.stringify(extra)}`;
}

/**
 * What a fault must leave: every answer in the contract, every request answered, every
 * acknowledged write stored exactly once (each key names its own event, and the balance equals
 * the keys acknowledged; verify checks it is the sum of the customer's events, each of 1 point),
 * and a ledger that `loyalty verify` passes.
 */
export async function expectExactlyOnce(base: string, token: string, databaseUrl: string, customerRemoteId: number, report: LoadReport): Promise<void> {
  expect(report.violations).toEqual([]);
  expect(report.answers.filter((a) => a.status === 0)).toEqual([]);
  const ids = new Set(report.acknowledged.values());
  expect(ids.size).toBe(report.acknowledged.size);
  const res = await fetch(`${base}${API}/customers/${customerRemoteId}`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as { data: { points_balance: number } }).data.points_balance).toBe(report.acknowledged.size);
  expect(await verify(databaseUrl)).toEqual({ ok: true, discrepancies: [] });
}

/** A customer to grant points to, made over HTTP. */
export async function createCustomer(base: string, token: string, remoteId: number): Promise<void> {
  const res = await fetch(`${base}${API}/customers/${remoteId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `fault${remoteId}@example.com` }),
  });
  expect(res.status).toBeLessThan(300);
}
