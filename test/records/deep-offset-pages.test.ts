import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { CHECKPOINTS_FROM } from '../../src/http/offset-checkpoints.js';
import { upsertRecords } from './samples.js';
import { customers } from '../../src/records/resources/customers.js';
import { setup, type TestContext } from '../helpers/app.js';
import { TEST_DIALECT } from '../helpers/database.js';

// Deep offset pages start from keys that earlier pages left (http/offset-checkpoints.ts). Each
// page here is read once before a write, so that its checkpoints exist, and again after it:
// a checkpoint kept across the write would show the page as it was.

const N = 3_200;
const PER_PAGE = 10;
// Pages whose offsets are deep enough to keep checkpoints, and the one after each.
const PAGES = [260, 261, 300, 310];
const SORTS = ['', 'sort[order_type]=updated_at&sort[order_direction]=desc', 'sort[order_type]=id&sort[order_direction]=desc', 'sort[order_type]=created_at'];

describe(`deep offset pages stay exact across writes (${TEST_DIALECT})`, () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await setup();
    // Remote IDs 10, 20, … written in four rounds, a minute apart: updated_at orders differently.
    for (let round = 0; round < 4; round++) {
      const rows = [];
      for (let i = round; i < N; i += 4) rows.push({ remote_id: 10 * (i + 1), email: `c${i}@example.com` });
      await upsertRecords(t.database.db, t.shop.id, customers, rows, t.clock.now);
      t.clock.advance(60_000);
    }
  });
  afterAll(() => t.close());

  type Customer = { remote_id: number; updated_at: string; created_at: string };

  /** Every customer in the order of `sort`, from a cursor walk and a sort here. */
  async function expectedOrder(sort: string): Promise<number[]> {
    const all: Customer[] = [];
    for (let since: number | null = 0; since !== null;) {
      const body: { data: Customer[]; links: { next_since_id: number | null } } = (
        await t.request('GET', `customers?pagination[since_id]=${since}&pagination[limit]=250`)
      ).json();
      all.push(...body.data);
      since = body.links.next_since_id;
    }
    const params = new URLSearchParams(sort);
    const field = params.get('sort[order_type]') ?? 'id';
    const sign = params.get('sort[order_direction]') === 'desc' ? -1 : 1;
    const key = (c: Customer) => (field === 'id' ? c.remote_id : Date.parse(c[field as 'updated_at' | 'created_at']));
    return all.sort((a, b) => sign * (key(a) - key(b) || a.remote_id - b.remote_id)).map((c) => c.remote_id);
  }

  /** Each deep page in each order, as the list shows it now. */
  async function expectPages(): Promise<void> {
    for (const sort of SORTS) {
      const order = await expectedOrder(sort);
      expect(order.length).toBeGreaterThan(PAGES.at(-1)! * PER_PAGE);
      for (const page of PAGES) {
        const res = await t.request('GET', `customers?${sort}&pagination[page]=${page}&pagination[per_page]=${PER_PAGE}`);
        expect(res.statusCode).toBe(200);
        expect(
          res.json().data.map((c: Customer) => c.remote_id),
          `${sort || 'default order'}, page ${page}`,
        ).toEqual(order.slice((page - 1) * PER_PAGE, page * PER_PAGE));
      }
    }
  }

  it('reads deep pages, each twice, as LIMIT/OFFSET would', async () => {
    expect((PAGES[0]! - 1) * PER_PAGE).toBeGreaterThanOrEqual(CHECKPOINTS_FROM);
    await expectPages();
    await expectPages();
  });

  it('after a customer is created before them', async () => {
    t.clock.advance(60_000);
    expect((await t.request('PUT', 'customers/5', { body: { email: 'first@example.com' } })).statusCode).toBe(201);
    await expectPages();
  });

  it('after a customer before them is deleted', async () => {
    expect((await t.request('DELETE', 'customers/20')).statusCode).toBe(200);
    await expectPages();
  });

  it('after a deep customer is changed (updated_at moves it to the front)', async () => {
    t.clock.advance(60_000);
    expect((await t.request('PUT', 'customers/30000', { body: { email: 'moved@example.com' } })).statusCode).toBe(200);
    await expectPages();
  });

  it('after another connection (another process) writes', async () => {
    let other: Database | undefined;
    try {
      other = connect(t.url);
      t.clock.advance(60_000);
      await upsertRecords(other.db, t.shop.id, customers, [{ remote_id: 7, email: 'elsewhere@example.com' }], t.clock.now);
    } finally {
      await other?.close();
    }
    await expectPages();
  });
});
