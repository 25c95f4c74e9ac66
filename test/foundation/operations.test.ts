import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, errorOf, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { DatabaseBusyError } from '../../src/db/connection-queue.js';
import { startJobs } from '../../src/jobs.js';

/** Collects the app's log output, one parsed JSON object per line. */
class LogCapture extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') this.lines.push(JSON.parse(line));
    done();
  }
}

/** The value of one Prometheus sample, or undefined when it is absent. */
function sample(metrics: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of metrics.split('\n')) {
    const match = /^(\w+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe(`health, readiness and metrics (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('answers /healthz and /readyz without a token', async () => {
    for (const url of ['/healthz', '/readyz']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
      expect(res.headers['x-request-id']).toMatch(/^req_/);
    }
  });

  it('counts requests by route and status and times them', async () => {
    await t.request('GET', `${API}/shop`);
    await t.request('GET', `${API}/shop`);
    await t.request('GET', `${API}/shop`, { token: 'nope' });
    await t.request('GET', '/nowhere');
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const route = `${API}/shop`;
    expect(sample(res.body, 'http_requests_total', { method: 'GET', route, status_code: '200' })).toBe(2);
    expect(sample(res.body, 'http_requests_total', { method: 'GET', route, status_code: '401' })).toBe(1);
    expect(sample(res.body, 'http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(sample(res.body, 'http_request_duration_seconds_count', { method: 'GET', route, status_code: '200' })).toBe(2);
    expect(sample(res.body, 'http_request_duration_seconds_bucket', { method: 'GET', route, status_code: '200', le: '+Inf' })).toBe(2);
    expect(res.body).toMatch(/^process_cpu_seconds_total/m);
  });
});

describe(`readiness without a database (${TEST_DIALECT})`, () => {
  it('answers /readyz 503 unavailable with Retry-After when the database is closed, while /healthz stays 200', async () => {
    const t = await setup();
    try {
      await t.database.close();
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(errorOf(res)).toMatchObject({ type: 'api_error', code: 'unavailable' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.app.close();
      await t.close().catch(() => {});
    }
  });
});

describe(`request ids and logs (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  const logs = new LogCapture();
  beforeAll(async () => {
    t = await setup({ config: { logLevel: 'info' }, logStream: logs });
  });
  afterAll(() => t.close());

  it('gives every response its own X-Request-Id, errors included', async () => {
    const responses = [
      await t.request('GET', `${API}/shop`),
      await t.request('GET', `${API}/shop`, { token: null }),
      await t.request('PATCH', `${API}/shop`, { body: '{', headers: { 'content-type': 'application/json' } }),
      await t.app.inject({ method: 'GET', url: '/healthz' }),
      await t.app.inject({ method: 'GET', url: '/missing' }),
    ];
    const ids = responses.map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(/^req_[\w-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of responses.filter((r) => r.statusCode >= 400)) expect(errorOf(r).request_id).toBe(r.headers['x-request-id']);
  });

  it('writes one JSON log line per request, carrying its request_id, and never the token', async () => {
    const res = await t.request('GET', `${API}/shop`);
    const id = res.headers['x-request-id'];
    const line = logs.lines.find((l) => l.request_id === id && l.msg === 'request completed');
    expect(line).toMatchObject({ level: 30, method: 'GET', url: `${API}/shop`, status: 200 });
    expect(typeof line!.ms).toBe('number');
    expect(JSON.stringify(logs.lines)).not.toContain(t.token);
  });

  it('logs a 500 with its request_id and the cause, which the response does not show', async () => {
    const other = await setup({ config: { logLevel: 'info' }, logStream: logs });
    try {
      await other.database.close();
      const res = await other.request('GET', `${API}/shop`);
      expect(res.statusCode).toBe(500);
      const id = res.headers['x-request-id'];
      const failure = logs.lines.find((l) => l.request_id === id && l.msg === 'request failed');
      expect(failure).toMatchObject({ level: 50 });
      expect(failure!.err).toBeDefined();
    } finally {
      await other.app.close();
      await other.close().catch(() => {});
    }
  });

  it('logs a background job that found the database busy as a warning, and any other failure as an error', async () => {
    const failing = (name: string, error: Error) => ({ name, intervalMs: () => 5, run: () => Promise.reject(error) });
    const stop = startJobs(t.app, [failing('busy-job', new DatabaseBusyError(1000)), failing('broken-job', new Error('a bug'))]);
    await expect.poll(() => logs.lines.filter((l) => l.job === 'busy-job' || l.job === 'broken-job').length).toBeGreaterThanOrEqual(2);
    await stop();
    const levelOf = (job: string) => logs.lines.find((l) => l.job === job)?.level;
    expect(levelOf('busy-job')).toBe(40);
    expect(levelOf('broken-job')).toBe(50);
  });
});
