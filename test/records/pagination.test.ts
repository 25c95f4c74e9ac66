import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCES } from '../../src/records/resources/index.js';
import { derive } from '../../src/records/resource.js';
import { API, errorOf, setup, type TestContext, type TestShop } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { seed, seedReferences } from './samples.js';

const PUBLIC = 'https://api.example.com';
const N = 1000;

describe(`pagination of every list endpoint (${TEST_DIALECT})`, () => {
  // The `it` blocks below share one context (database, shop, clock): they run in order.
  let t: TestContext;
  let other: TestShop;
  const ids = new Map<string, number[]>();
  beforeAll(async () => {
    t = await setup({ config: { publicUrl: PUBLIC } });
    other = await t.createShop();
    await seedReferences(t.database.db, t.shop.id, RESOURCES, t.clock.now);
    for (const r of RESOURCES) ids.set(r.table, await seed(t.database.db, t.shop.id, r, N, t.clock.now));
  });
  afterAll(() => t.close());

  const get = (path: string, token?: string) => t.request('GET', `${API}/${path}`, token ? { token } : {});

  describe.each(RESOURCES.map((r) => [r.path, r] as const))('%s', (path, r) => {
    const idOf = (record: Record<string, unknown>) => record[r.id] as number;
    // The seeded records, plus the one samples refer to when this resource is referenced.
    const expected = () => ids.get(r.table)!;

    it(`cursor mode from since_id=0 sees each of ${N} records exactly once, ascending by ${r.id}`, async () => {
      const seen: number[] = [];
      let sinceId: number | null = 0;
      let requests = 0;
      while (sinceId !== null) {
        const res = await get(`${path}?pagination[since_id]=${sinceId}&pagination[limit]=100`);
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body.links).toEqual({ since_id: sinceId, limit: 100, next_since_id: body.links.next_since_id });
        seen.push(...body.data.map(idOf));
        if (body.links.next_since_id !== null) expect(body.links.next_since_id).toBe(seen.at(-1));
        sinceId = body.links.next_since_id;
        requests++;
      }
      const all = [...expected(), ...(r.id === 'remote_id' ? [900_000] : [])].sort((a, b) => a - b);
      expect(seen).toEqual(all);
      // A full last page ends with null too: no empty extra page.
      expect(requests).toBe(Math.ceil(all.length / 100));
    });

    it('cursor mode defaults: limit 25 from since_id, or since_id 0 with a limit; sort ignored', async () => {
      const from = expected()[10]!;
      const a = (await get(`${path}?pagination[since_id]=${from}`)).json();
      expect(a.links.limit).toBe(25);
      expect(a.data.map(idOf)).toEqual(expected().slice(11, 36));
      const b = (await get(`${path}?pagination[limit]=3&sort[order_type]=nonsense&sort[order_direction]=sideways&pagination[page]=999`)).json();
      expect(b.links).toEqual({ since_id: 0, limit: 3, next_since_id: expected()[2] });
      expect(b.data.map(idOf)).toEqual(expected().slice(0, 3));
    });

    it('a since_id beyond every possible ID is valid and ends the iteration', async () => {
      for (const since of ['9007199254740993', '99999999999999999999']) {
        const res = await get(`${path}?pagination[since_id]=${since}&pagination[limit]=5`);
        expect(res.statusCode).toBe(200);
        expect(res.json().data).toEqual([]);
        expect(res.json().links.next_since_id).toBeNull();
      }
    });

    it('per_page with since_id falls back to offset mode and ignores since_id and limit', async () => {
      const res = await get(`${path}?pagination[since_id]=${expected()[500]}&pagination[per_page]=10&pagination[limit]=9999`);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.links.self).toBeTypeOf('string');
      expect(body.data.map(idOf)).toEqual(expected().slice(0, 10));
    });

    it('answers 400 naming each bad parameter it uses', async () => {
      const cases: [string, string][] = [
        ['pagination[page]=501', 'pagination[page]'],
        ['pagination[page]=0', 'pagination[page]'],
        ['pagination[per_page]=251', 'pagination[per_page]'],
        ['pagination[per_page]=0', 'pagination[per_page]'],
        ['pagination[limit]=251', 'pagination[limit]'],
        ['pagination[limit]=1.5', 'pagination[limit]'],
        ['pagination[since_id]=-1', 'pagination[since_id]'],
        ['pagination[since_id]=abc', 'pagination[since_id]'],
        ['sort[order_type]=nonsense', 'sort[order_type]'],
        ['sort[order_direction]=up', 'sort[order_direction]'],
      ];
      for (const [query, param] of cases) {
        const res = await get(`${path}?${query}`);
        expect(res.statusCode, query).toBe(400);
        expect(errorOf(res)).toMatchObject({ code: 'invalid_parameter', details: [expect.objectContaining({ param })] });
      }
      const both = await get(`${path}?pagination[page]=501&pagination[per_page]=251`);
      expect(errorOf(both).details!.map((d) => d.param)).toEqual(['pagination[page]', 'pagination[per_page]']);
    });

    it('offset links are absolute, exact, and keep the other parameters', async () => {
      const query = 'sort[order_type]=created_at&sort[order_direction]=desc';
      const link = (page: number) => `${PUBLIC}${API}/${path}?${query}&pagination[page]=${page}&pagination[per_page]=100`;
      const total = expected().length + (r.id === 'remote_id' ? 1 : 0);
      const lastPage = Math.ceil(total / 100);
      const first = (await get(`${path}?${query}&pagination[per_page]=100&pagination[page]=2`)).json();
      expect(first.links).toEqual({ self: link(2), next: link(3), last: link(lastPage) });
      const last = (await get(`${path}?${query}&pagination[page]=${lastPage}&pagination[per_page]=100`)).json();
      expect(last.links.next).toBeNull();
      expect(last.data.length).toBe(total - (lastPage - 1) * 100);
      const past = (await get(`${path}?${query}&pagination[page]=${lastPage + 1}&pagination[per_page]=100`)).json();
      expect(past).toEqual({ links: { self: link(lastPage + 1), next: null, last: link(lastPage) }, data: [] });
    });

    it.each([
      ['id', 'asc'],
      ['updated_at', 'desc'],
    ] as const)('offset links stop at page 500 (sorted by %s %s)', async (field, direction) => {
      // N records at 1 per page reach past page 500, from whichever page `last` is counted.
      const query = `sort[order_type]=${field}&sort[order_direction]=${direction}`;
      const link = (page: number) => `${PUBLIC}${API}/${path}?${query}&pagination[page]=${page}&pagination[per_page]=1`;
      for (const page of [1, 2, 499]) {
        const body = (await get(`${path}?${query}&pagination[page]=${page}&pagination[per_page]=1`)).json();
        expect(body.links).toEqual({ self: link(page), next: link(page + 1), last: link(500) });
      }
      const end = (await get(`${path}?${query}&pagination[page]=500&pagination[per_page]=1`)).json();
      expect(end.links).toEqual({ self: link(500), next: null, last: link(500) });
      expect(end.data).toHaveLength(1);
    });

    it('with no parameters: page 1 of 25, by ID ascending', async () => {
      const body = (await get(path)).json();
      const total = expected().length + (r.id === 'remote_id' ? 1 : 0);
      const link = (page: number) => `${PUBLIC}${API}/${path}?pagination[page]=${page}&pagination[per_page]=25`;
      expect(body.links).toEqual({ self: link(1), next: link(2), last: link(Math.ceil(total / 25)) });
      expect(body.data.map(idOf)).toEqual(expected().slice(0, 25));
    });

    it.each(
      ['id', ...Object.keys(derive(r).sortable)].flatMap(
        (f) =>
          [
            [f, 'asc'],
            [f, 'desc'],
          ] as const,
      ),
    )('sorts by %s %s, ties broken by ID', async (field, direction) => {
      const all: Record<string, unknown>[] = [];
      for (let sinceId: number | null = 0; sinceId !== null;) {
        const body: { data: Record<string, unknown>[]; links: { next_since_id: number | null } } = (
          await get(`${path}?pagination[since_id]=${sinceId}&pagination[limit]=250`)
        ).json();
        all.push(...body.data);
        sinceId = body.links.next_since_id;
      }
      const key = field === 'id' ? r.id : field;
      const sign = direction === 'asc' ? 1 : -1;
      const cmp = (a: unknown, b: unknown) => (a === b ? 0 : (a as number) < (b as number) ? -1 : 1);
      const want = [...all].sort((a, b) => sign * (cmp(a[key], b[key]) || cmp(idOf(a), idOf(b)))).map(idOf);
      const got: number[] = [];
      for (let page = 1; page <= Math.ceil(all.length / 250); page++) {
        const res = await get(`${path}?sort[order_type]=${field}&sort[order_direction]=${direction}&pagination[page]=${page}&pagination[per_page]=250`);
        expect(res.statusCode).toBe(200);
        got.push(...res.json().data.map(idOf));
      }
      expect(got).toEqual(want);
    });

    it('another shop sees none of these records: empty lists, 404 on each', async () => {
      const list = (await get(path, other.token)).json();
      expect(list.data).toEqual([]);
      expect(list.links.next).toBeNull();
      const cursor = (await get(`${path}?pagination[since_id]=0`, other.token)).json();
      expect(cursor).toEqual({ links: { since_id: 0, limit: 25, next_since_id: null }, data: [] });
      const res = await get(`${path}/${expected()[0]}`, other.token);
      expect(res.statusCode).toBe(404);
      expect(errorOf(res).code).toBe('not_found');
    });
  });

  it('links use the request origin when PUBLIC_URL is unset, brackets literal, other parameters encoded', async () => {
    const local = await setup();
    try {
      await local.request('PUT', `${API}/customers/5`, { body: {} });
      const res = await local.request('GET', `${API}/customers?pagination%5Bper_page%5D=1&email=J%C3%BCrgen%26co%40example.com`, {
        headers: { host: 'shop.test:8080' },
      });
      expect(res.json().links).toEqual({
        self: `http://shop.test:8080${API}/customers?email=J%C3%BCrgen%26co%40example.com&pagination[page]=1&pagination[per_page]=1`,
        next: null,
        last: `http://shop.test:8080${API}/customers?email=J%C3%BCrgen%26co%40example.com&pagination[page]=1&pagination[per_page]=1`,
      });
    } finally {
      await local.close();
    }
  });
});
