import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

interface Operation {
  operationId?: string;
  tags?: string[];
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
  tags: { name: string; description?: string }[];
}

interface LintProblem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

/** Runs the real linter (@redocly/cli) with the committed redocly.yaml; no network needed. */
async function lint(document: Document): Promise<{ totals: { errors: number; warnings: number }; problems: LintProblem[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-openapi-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(document, null, 2));
  try {
    const result = await run(path.join(ROOT, 'node_modules/.bin/redocly'), ['lint', file, '--config', path.join(ROOT, 'redocly.yaml'), '--format=json'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string }) => error);
    return JSON.parse(result.stdout ?? '');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([p, item]) => Object.entries(item).map(([method, op]) => ({ where: `${method.toUpperCase()} ${p}`, path: p, op })));

describe(`the OpenAPI document (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let doc: Document;
  beforeAll(async () => {
    t = await setup();
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(() => t.close());

  it('passes the Redocly linter (recommended rules) without errors or warnings', async () => {
    const result = await lint(doc);
    const report = result.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`).join('\n');
    expect(report).toBe('');
    expect(result.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('makes the linter fail when an operation loses its documented errors', async () => {
    const broken = structuredClone(doc);
    for (const op of Object.values(broken.paths[`${API}/shop`]!)) op.responses = { 200: op.responses['200']! };
    const result = await lint(broken);
    expect(result.problems.map((p) => p.ruleId)).toContain('rule/api-operation-401');
  });

  it('is OpenAPI 3.1 with the shared Error schema in components', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.Error).toMatchObject({ type: 'object', required: ['error'] });
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([]);
  });

  it('documents every error response with the Error schema, and every API operation with 401', () => {
    for (const { where, path: p, op } of operations(doc)) {
      if (p.startsWith(API)) expect(Object.keys(op.responses), where).toContain('401');
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        expect(response.content?.['application/json']?.schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('gives every operation a unique operationId and a described tag', () => {
    const ids = operations(doc).map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths[`${API}/shop`]!.get!.operationId).toBe('getShop');
    expect(doc.paths[`${API}/shop`]!.patch!.operationId).toBe('updateShop');
    const described = new Set(doc.tags.filter((tag) => tag.description).map((tag) => tag.name));
    for (const { where, op } of operations(doc)) for (const tag of op.tags ?? []) expect(described.has(tag), `${where} tag ${tag}`).toBe(true);
  });

  it('documents Idempotency-Key on every API write', () => {
    for (const { where, path: p, op } of operations(doc)) {
      if (!p.startsWith(API) || where.startsWith('GET')) continue;
      const params = (op as { parameters?: { in: string; name: string }[] }).parameters ?? [];
      expect(params.some((param) => param.in === 'header' && param.name.toLowerCase() === 'idempotency-key'), where).toBe(true);
    }
  });

  it('documents the headers responses carry: X-Request-Id, RateLimit-*, Idempotent-Replayed on write successes', () => {
    for (const { where, path: p, op } of operations(doc)) {
      const responses = (op as { responses?: Record<string, { headers?: Record<string, unknown> }> }).responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        const names = Object.keys(response.headers ?? {});
        expect(names, `${where} ${status}`).toContain('X-Request-Id');
        if (!p.startsWith(API)) continue;
        expect(names, `${where} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
        const replayable = !where.startsWith('GET') && status.startsWith('2');
        expect(names.includes('Idempotent-Replayed'), `${where} ${status}`).toBe(replayable);
      }
    }
  });
});

describe(`the interactive reference (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
  });
  afterAll(() => t.close());

  it('serves an HTML page at /docs that loads its script from this server', async () => {
    const redirect = await t.app.inject({ method: 'GET', url: '/docs' });
    const page = redirect.statusCode === 200 ? redirect : await t.app.inject({ method: 'GET', url: redirect.headers.location as string });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('/openapi.json');
    const scripts = [...page.body.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) {
      expect(src, 'no CDN: the page must work offline').not.toMatch(/^(https?:)?\/\//);
      const script = await t.app.inject({ method: 'GET', url: new URL(src, 'http://localhost/docs/').pathname });
      expect(script.statusCode, src).toBe(200);
      expect(script.headers['content-type']).toMatch(/javascript/);
      expect(script.body.length).toBeGreaterThan(10_000);
    }
  });
});
