import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_SCRIPT_FILE } from '../../src/http/api-reference.js';
import { API, setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * What each merchant operation gained when tokens got scopes (docs/access.md): its security
 * requirement naming its scope under both schemes, and its 403 response.
 */
const SECURITY_BYTES = 110;

/**
 * The document's budget, as served, per operation: the issue that folded shared parts into
 * components (624 KB → 149 KB) set 150,000 bytes for the 62 operations there were then. The
 * API has grown since (the storefront, reports, exports); what the budget guards against is
 * repetition, which shows as bytes per operation, so each operation keeps that share.
 */
/**
 * What each operation gained with read replicas (docs/scaling.md): a write's success response
 * names Loyalty-Read-After (a reference to the shared header, ~60 bytes a write).
 */
const READ_AFTER_BYTES = 15;
const BYTES_PER_OPERATION = Math.floor(150_000 / 62) + SECURITY_BYTES + READ_AFTER_BYTES;
/**
 * The shop's settings of the programme's further rules (tier metric, retention, currency,
 * refunds, expiry mode, inactivity, reminders): about 2 KB described once in Shop and 1.5 KB of
 * their types in ShopUpdate (its copies carry no description). Settings of one resource, not
 * operations: a fixed allowance beside the per-operation share.
 */
const SHOP_SETTINGS_BYTES = 4_000;
/**
 * The campaigns a shopper sees in the storefront's programme (docs/storefront.md), described
 * once in StorefrontProgramme (about 650 bytes): fields of an existing operation's answer, not
 * an operation, so a fixed allowance as for the shop's settings.
 */
const STOREFRONT_CAMPAIGNS_BYTES = 700;

/**
 * Ways to earn (docs/earning.md): six fields of earning rules, described in EarningRule and
 * typed again in its create and update bodies, and the way to earn as the storefront shows it
 * (StorefrontWayToEarn, and StorefrontMyWayToEarn with the shopper's progress): fields of a
 * resource rather than operations, a fixed allowance as for the shop's settings.
 */
const WAYS_TO_EARN_BYTES = 5_500;
/** POSTs that write nothing: no Idempotency-Key. */
const READ_ONLY_POSTS = new Set([`POST ${API}/earning_rules/preview`]);

type Json = Record<string, unknown>;

interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, Json>;
  content?: Record<string, { schema?: { $ref?: string } }>;
}
interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: Json[];
  responses: Record<string, Response>;
}
type PathItem = Partial<Record<'get' | 'put' | 'post' | 'patch' | 'delete', Operation>> & { parameters?: Json[] };
interface Document {
  openapi: string;
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, unknown>; headers: Record<string, Json>; responses: Record<string, Response>; parameters: Record<string, Json> };
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

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete']);

const operations = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => ({ where: `${method.toUpperCase()} ${p}`, path: p, item, op: op as Operation })),
  );

/** What a `$ref` points at (a JSON pointer into the document), or undefined. */
function target(doc: Document, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const part of ref.slice(2).split('/')) node = (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  return node;
}

/** A Reference Object resolved, with the description it may give beside the `$ref` (OpenAPI 3.1). */
function resolve<T>(doc: Document, node: T): T {
  const ref = (node as { $ref?: string }).$ref;
  if (ref === undefined) return node;
  const { $ref: _, ...own } = node as Json;
  return { ...(target(doc, ref) as T), ...own };
}

/** An operation's parameters, its path's included, resolved. */
const parametersOf = (doc: Document, item: PathItem, op: Operation) =>
  [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p) => resolve(doc, p) as { in: string; name: string });

/** Every `$ref` in a value, with where it is. */
function refs(value: unknown, where = '#'): { where: string; ref: string }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => refs(v, `${where}/${i}`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, v]) => (key === '$ref' && typeof v === 'string' ? [{ where, ref: v }] : refs(v, `${where}/${key}`)));
}

describe(`the OpenAPI document (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let doc: Document;
  let bytes: number;
  beforeAll(async () => {
    t = await setup();
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    bytes = res.rawPayload.byteLength;
    doc = res.json();
  });
  afterAll(() => t.close());

  it('passes the Redocly linter (recommended rules) without errors or warnings', async () => {
    const result = await lint(doc);
    const report = result.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`).join('\n');
    expect(report).toBe('');
    expect(result.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('lints with every recommended rule as recommended: redocly.yaml only adds rules', () => {
    const config = fs.readFileSync(path.join(ROOT, 'redocly.yaml'), 'utf8');
    expect(config).toMatch(/^extends:\s*\n\s+- recommended\s*$/m);
    expect(config).not.toMatch(/^\s+[\w/-]+:\s*(off|warn)\s*$/m);
  });

  it('makes the linter fail when an operation loses its documented errors', async () => {
    const broken = structuredClone(doc);
    for (const op of [broken.paths[`${API}/shop`]!.get!, broken.paths[`${API}/shop`]!.patch!]) op.responses = { 200: op.responses['200']! };
    const result = await lint(broken);
    expect(result.problems.map((p) => p.ruleId)).toContain('rule/api-operation-401');
  });

  it(`is under ${BYTES_PER_OPERATION} bytes per operation as served`, () => {
    const count = operations(doc).length;
    expect(count).toBeGreaterThan(62);
    expect(bytes).toBeLessThan(BYTES_PER_OPERATION * count + SHOP_SETTINGS_BYTES + STOREFRONT_CAMPAIGNS_BYTES + WAYS_TO_EARN_BYTES);
  });

  it('is OpenAPI 3.1 with the shared Error schema in components', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.schemas.Error).toMatchObject({ type: 'object', required: ['error'] });
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([]);
  });

  it('refers only to components that exist, so /docs can resolve every $ref', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(500);
    for (const { where, ref } of all) {
      expect(ref, where).toMatch(/^#\/components\/(schemas|headers|responses|parameters|examples)\/[\w.-]+$/);
      expect(target(doc, ref), `${where}: ${ref}`).toBeTypeOf('object');
    }
  });

  it('declares headers, error responses and parameters once, in components, and refers to them', () => {
    expect(Object.keys(doc.components.headers)).toEqual(expect.arrayContaining(['RequestId', 'Limit', 'Remaining', 'Reset', 'Replayed', 'RetryAfter']));
    expect(Object.keys(doc.components.responses)).toEqual(
      expect.arrayContaining([
        'Unauthorized',
        'BadRequest',
        'NotFound',
        'IdempotencyKeyInUse',
        'PayloadTooLarge',
        'UnsupportedMediaType',
        'ValidationFailed',
        'OtherError',
      ]),
    );
    expect(Object.keys(doc.components.parameters)).toEqual(
      expect.arrayContaining(['IdempotencyKey', 'PaginationSinceId', 'PaginationLimit', 'PaginationPage', 'PaginationPerPage', 'SortOrderDirection']),
    );
    // Inline, only what is said once: no header object, no error response, no shared parameter.
    const responses = [...operations(doc).flatMap(({ op }) => Object.values(op.responses)), ...Object.values(doc.components.responses)];
    for (const response of responses) for (const [name, header] of Object.entries(response.headers ?? {})) expect(header, name).toHaveProperty('$ref');
    for (const { where, item, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses))
        if (!status.startsWith('2')) expect(response.$ref, `${where} ${status}`).toMatch(/^#\/components\/responses\//);
      for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])]) {
        if (p.$ref) continue;
        expect(String(p.name), where).not.toMatch(/^(Idempotency-Key|pagination\[|sort\[order_direction\])/);
      }
    }
  });

  it('documents every error response with the Error schema, and every API operation with 401', () => {
    for (const { where, path: p, op } of operations(doc)) {
      if (p.startsWith(API)) expect(Object.keys(op.responses), where).toContain('401');
      for (const [status, ref] of Object.entries(op.responses)) {
        if (status.startsWith('2')) continue;
        const response = resolve(doc, ref);
        expect(response.description, `${where} ${status}`).toBeTruthy();
        expect(response.content?.['application/json']?.schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });

  it('refers every 404 to the one shared response, which says the message names the record', () => {
    const notFounds = operations(doc).flatMap(({ op }) => (op.responses['404'] ? [op.responses['404']] : []));
    expect(notFounds.length).toBeGreaterThan(20);
    for (const response of notFounds) expect(response).toEqual({ $ref: '#/components/responses/NotFound' });
    expect(doc.components.responses.NotFound!.description).toMatch(/the message says which/);
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

  it('documents Idempotency-Key on every API write, and not on a POST that writes nothing', () => {
    for (const { where, path: p, item, op } of operations(doc)) {
      if (!p.startsWith(API) || where.startsWith('GET')) continue;
      const documented = parametersOf(doc, item, op).some((param) => param.in === 'header' && param.name.toLowerCase() === 'idempotency-key');
      expect(documented, where).toBe(!READ_ONLY_POSTS.has(where));
    }
  });

  it('documents the path parameters of every operation', () => {
    for (const { where, path: p, item, op } of operations(doc)) {
      const names = parametersOf(doc, item, op)
        .filter((param) => param.in === 'path')
        .map((param) => param.name)
        .sort();
      expect(names, where).toEqual([...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort());
    }
  });

  it('says what the server accepts: integer path ids, optional empty bodies, the bare token as a second scheme', () => {
    const ids = operations(doc).flatMap(({ where, item, op }) =>
      parametersOf(doc, item, op)
        .filter((param) => param.in === 'path' && param.name !== 'customer_identifier' && param.name !== 'list')
        .map((param) => ({ where, schema: resolve(doc, (param as { schema?: Json }).schema ?? {}) })),
    );
    expect(ids.length).toBeGreaterThan(20);
    for (const { where, schema } of ids) expect(schema, where).toMatchObject({ type: 'integer', minimum: 1 });
    const bodyOf = (where: string) => operations(doc).find((o) => o.where === where)!.op as Operation & { requestBody?: { required?: boolean } };
    const optional = [
      'redemptions/{id}/use',
      'redemptions/{id}/void',
      'referrals/{id}/complete',
      'referrals/{id}/cancel',
      'points_events/{id}/reverse',
      'webhooks/{id}/deliveries/{delivery_id}/retry',
    ];
    for (const p of optional) {
      expect(bodyOf(`POST ${API}/${p}`).requestBody, p).toBeDefined();
      expect(bodyOf(`POST ${API}/${p}`).requestBody!.required, p).toBeUndefined();
    }
    expect(bodyOf(`POST ${API}/points_events`).requestBody!.required).toBe(true);
    const security = doc as unknown as { security: unknown; components: { securitySchemes: Record<string, Json> } };
    expect(security.security).toEqual([{ bearerAuth: [] }, { tokenAuth: [] }]);
    expect(security.components.securitySchemes.tokenAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' });
  });

  it('documents the headers responses carry: X-Request-Id, RateLimit-* once authenticated, Idempotent-Replayed on write successes', () => {
    for (const { where, path: p, op } of operations(doc)) {
      for (const [status, ref] of Object.entries(op.responses)) {
        const names = Object.keys(resolve(doc, ref).headers ?? {});
        expect(names, `${where} ${status}`).toContain('X-Request-Id');
        if (!p.startsWith(API)) continue;
        const rateLimit = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
        if (status === '401')
          expect(
            names.filter((name) => rateLimit.includes(name)),
            `${where} ${status}`,
          ).toEqual([]);
        else expect(names, `${where} ${status}`).toEqual(expect.arrayContaining(rateLimit));
        const replayable = !where.startsWith('GET') && !READ_ONLY_POSTS.has(where) && status.startsWith('2');
        expect(names.includes('Idempotent-Replayed'), `${where} ${status}`).toBe(replayable);
      }
    }
  });

  it('documents the headers as they are sent: no RateLimit-* before authentication', async () => {
    const rateLimit = (headers: Record<string, unknown>) => Object.keys(headers).filter((name) => name.startsWith('ratelimit-'));
    const anonymous = await t.app.inject({ method: 'GET', url: `${API}/shop` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['x-request-id']).toBeDefined();
    expect(rateLimit(anonymous.headers)).toEqual([]);
    const authenticated = await t.request('GET', `${API}/shop`);
    expect(authenticated.statusCode).toBe(200);
    expect(rateLimit(authenticated.headers).sort()).toEqual(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']);
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

  it("serves the Scalar package's script as it is on disk, revalidated by its ETag", async () => {
    const url = '/docs/js/scalar.js';
    const script = await t.app.inject({ method: 'GET', url });
    expect(script.statusCode).toBe(200);
    expect(script.rawPayload.equals(fs.readFileSync(REFERENCE_SCRIPT_FILE))).toBe(true);
    expect(script.headers['content-length']).toBe(String(fs.statSync(REFERENCE_SCRIPT_FILE).size));
    expect(script.headers['cache-control']).toBe('no-cache');
    const etag = script.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const other = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': '"other"' } });
    expect(other.statusCode).toBe(200);
    expect(other.rawPayload.length).toBe(script.rawPayload.length);
  });
});
