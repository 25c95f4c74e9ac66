import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API } from '../helpers/app.js';
import { cliContext, type CliContext, type CliResult, type CliShop } from '../helpers/cli.js';
import { TEST_DIALECT } from '../helpers/database.js';

// `loyalty import <resource> <file> --shop <id>`: NDJSON or CSV, upserted by remote_id with the
// validation a PUT body gets; bad rows are listed by their line in the file and skipped.

const ndjson = (...rows: unknown[]) => `${rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')}\n`;

interface Summary {
  imported: number;
  rejected: { line: number; reason: string }[];
  seconds: number;
}

describe(`loyalty import (${TEST_DIALECT})`, () => {
  let t: CliContext;
  beforeAll(async () => {
    t = await cliContext();
  });
  afterAll(() => t?.close());

  /** Runs the import; stdout is a pipe, so it must never hold a progress bar's \r frames. */
  const load = async (shop: CliShop, resource: string, file: string, ...extra: string[]): Promise<CliResult> => {
    const result = await t.run('import', resource, file, '--shop', String(shop.shop.id), ...extra);
    expect(result.stdout).not.toContain('\r');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    return result;
  };
  const loadJson = async (shop: CliShop, resource: string, file: string, ...extra: string[]): Promise<{ code: number; summary: Summary }> => {
    const result = await load(shop, resource, file, '--json', ...extra);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const summary = JSON.parse(result.stdout) as Summary;
    expect(Object.keys(summary).sort()).toEqual(['imported', 'rejected', 'seconds']);
    return { code: result.code, summary };
  };
  /** What the API answers for the same body PUT by hand: the reason an import should give. */
  const putReason = async (shop: CliShop, path: string, remoteId: number, body: object): Promise<string> => {
    const res = await t.app.inject({ method: 'PUT', url: `${API}/${path}/${remoteId}`, headers: { authorization: `Bearer ${shop.token}` }, payload: body });
    expect(res.statusCode, res.body).toBe(422);
    return (res.json().error.details as { param: string; message: string }[]).map((d) => `${d.param}: ${d.message}`).join('; ');
  };
  const withoutUpdatedAt = (rows: { updated_at?: string }[]) => rows.map(({ updated_at: _u, ...rest }) => rest);

  it('imports customers from NDJSON: every field as the API reads it, fields left out cleared', async () => {
    const shop = await t.createShop();
    const file = t.write(
      'customers.ndjson',
      ndjson(
        { remote_id: 1, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', phone: '+44 20 7946 0958', birthday: '1815-12-10' },
        { remote_id: 2, email: 'Grace@Example.com', first_name: 'Grace', last_name: 'Hopper' },
        { remote_id: 9007199254740991, email: null },
      ),
    );
    const result = await load(shop, 'customers', file);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Imported 3 customers, rejected 0 rows \(\d+\.\d s\)\.\n$/);

    const ada = await t.get(shop.token, 'customers/1');
    expect(ada.status).toBe(200);
    expect(ada.body.data).toEqual({
      remote_id: 1,
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone: '+44 20 7946 0958',
      birthday: '1815-12-10',
      referral_code: expect.stringMatching(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{12}$/),
      points_balance: 0,
      credits_balance: 0,
      points_pending: 0,
      points_earned_lifetime: 0,
      points_spent_lifetime: 0,
      next_expiry: null,
      vip_tier: null,
      vip_tier_retained_until: null,
      vip_tier_progress: { metric: 'points_earned', value: 0, points_earned: 0, next_tier: null, needed: 0, points_needed: 0 },
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect((await t.get(shop.token, 'customers/grace@example.com')).body.data).toMatchObject({
      remote_id: 2,
      email: 'Grace@Example.com',
      phone: null,
      birthday: null,
    });
    const all = await t.all(shop.token, 'customers');
    expect(all.map((c) => c.remote_id)).toEqual([1, 2, 9007199254740991]);
    expect(all[2]).toMatchObject({ email: null, first_name: null, last_name: null });
  });

  it('imports customers from CSV: byte order mark, CRLF, quoted commas; a blank cell is null', async () => {
    const shop = await t.createShop();
    const csv = [
      'remote_id,last_name,first_name,email,birthday,phone',
      '1,"Lovelace, Countess",Ada,ada@example.com,1815-12-10,',
      '2,Hopper,Grace,,,+1 555 0100',
      '',
    ].join('\r\n');
    const result = await load(shop, 'customers', t.write('customers.csv', `\uFEFF${csv}`));
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Imported 2 customers, rejected 0 rows/);
    expect((await t.get(shop.token, 'customers/1')).body.data).toMatchObject({
      remote_id: 1,
      email: 'ada@example.com',
      first_name: 'Ada',
      last_name: 'Lovelace, Countess',
      birthday: '1815-12-10',
      phone: null,
    });
    expect((await t.get(shop.token, 'customers/2')).body.data).toMatchObject({ email: null, birthday: null, phone: '+1 555 0100' });
  });

  it('imports orders from CSV and subscription contracts from NDJSON, typed as the API types them', async () => {
    const shop = await t.createShop();
    const orders = t.write(
      'orders.csv',
      [
        'remote_id,customer_remote_id,total,currency,financial_status,placed_at',
        '5001,1,59.90,EUR,paid,2026-01-15T12:00:00Z',
        '5002,,12,USD,refunded,2026-01-16T08:30:00+01:00',
        '',
      ].join('\n'),
    );
    for (let run = 0; run < 2; run++) {
      const { code, summary } = await loadJson(shop, 'orders', orders);
      expect(code).toBe(0);
      expect(summary).toEqual({ imported: 2, rejected: [], seconds: expect.any(Number) });
    }
    const list = await t.all(shop.token, 'orders');
    expect(list).toEqual([
      expect.objectContaining({
        remote_id: 5001,
        customer_remote_id: 1,
        total: 59.9,
        currency: 'EUR',
        financial_status: 'paid',
        placed_at: '2026-01-15T12:00:00.000Z',
      }),
      expect.objectContaining({
        remote_id: 5002,
        customer_remote_id: null,
        total: 12,
        currency: 'USD',
        financial_status: 'refunded',
        placed_at: '2026-01-16T07:30:00.000Z',
      }),
    ]);

    const contracts = t.write(
      'contracts.ndjson',
      ndjson(
        { remote_id: 7001, customer_remote_id: 1, status: 'active', next_billing_date: '2026-02-01T00:00:00Z' },
        { remote_id: 7002, customer_remote_id: 2, status: 'paused', next_billing_date: '2026-03-01T00:00:00Z' },
      ),
    );
    expect((await loadJson(shop, 'subscription_contracts', contracts)).summary).toMatchObject({ imported: 2, rejected: [] });
    expect((await t.get(shop.token, 'subscription_contracts/7002')).body.data).toMatchObject({
      remote_id: 7002,
      customer_remote_id: 2,
      status: 'paused',
      next_billing_date: '2026-03-01T00:00:00.000Z',
    });
  });

  it("names an order's or a contract's customer by customer_identifier (remote_id or e-mail), as a PUT does", async () => {
    const shop = await t.createShop();
    const people = t.write('people.ndjson', ndjson({ remote_id: 1, email: 'Ada@Example.com' }, { remote_id: 2, email: 'grace@example.com' }));
    expect((await loadJson(shop, 'customers', people)).summary).toMatchObject({ imported: 2, rejected: [] });
    const order = { total: 10, currency: 'EUR', financial_status: 'pending', placed_at: '2026-01-15T12:00:00Z' };
    const lines = [
      /* 1 */ { remote_id: 5001, customer_identifier: 'ADA@example.com', ...order },
      /* 2 */ { remote_id: 5002, customer_identifier: '2', ...order },
      /* 3 */ { remote_id: 5003, customer_identifier: '77', ...order },
      /* 4 */ { remote_id: 5004, customer_identifier: 'nobody@example.com', ...order },
      /* 5 */ { remote_id: 5005, customer_remote_id: 2, customer_identifier: 'ada@example.com', ...order },
      /* 6 */ { remote_id: 5006, customer_remote_id: 1, customer_identifier: 'ada@example.com', ...order },
      /* 7 */ { remote_id: 5007, customer_identifier: 'ada', ...order },
    ];
    const { summary } = await loadJson(shop, 'orders', t.write('orders.ndjson', ndjson(...lines)));
    expect(summary.imported).toBe(4);
    expect(summary.rejected.map((r) => [r.line, r.reason.split(':')[0]])).toEqual([
      [4, 'customer_identifier'],
      [5, 'customer_identifier'],
      [7, 'customer_identifier'],
    ]);
    for (const { line, reason } of summary.rejected) {
      const { remote_id, ...body } = lines[line - 1]!;
      expect(reason, `line ${line}`).toBe(await putReason(shop, 'orders', remote_id, body));
    }
    const stored = (await t.all(shop.token, 'orders')).map((o) => [o.remote_id, o.customer_remote_id]);
    expect(stored).toEqual([
      [5001, 1],
      [5002, 2],
      [5003, 77],
      [5006, 1],
    ]);

    // A CSV row cannot leave a column out: a blank cell of either is not given.
    const csv = [
      'remote_id,customer_remote_id,customer_identifier,total,currency,financial_status,placed_at',
      '5101,,grace@EXAMPLE.com,10,EUR,paid,2026-01-15T12:00:00Z',
      '5102,1,,10,EUR,paid,2026-01-15T12:00:00Z',
      '5103,,,10,EUR,paid,2026-01-15T12:00:00Z',
      '',
    ];
    expect((await loadJson(shop, 'orders', t.write('orders.csv', csv.join('\n')))).summary).toMatchObject({ imported: 3, rejected: [] });
    expect((await t.all(shop.token, 'orders')).slice(-3).map((o) => o.customer_remote_id)).toEqual([2, 1, null]);

    const contracts = ndjson(
      { remote_id: 7001, customer_identifier: 'grace@example.com', status: 'active', next_billing_date: '2026-02-01T00:00:00Z' },
      { remote_id: 7002, status: 'active', next_billing_date: '2026-02-01T00:00:00Z' },
    );
    const imported = (await loadJson(shop, 'subscription_contracts', t.write('contracts.ndjson', contracts))).summary;
    expect(imported).toMatchObject({ imported: 1, rejected: [{ line: 2, reason: 'customer_remote_id: give customer_remote_id or customer_identifier' }] });
    expect((await t.get(shop.token, 'subscription_contracts/7001')).body.data).toMatchObject({ customer_remote_id: 2 });
  });

  it('is harmless to re-run: same summary, no duplicates, only changed fields change', async () => {
    const shop = await t.createShop();
    const rows = [
      { remote_id: 41, email: 'a41@example.com', first_name: 'Ada' },
      { remote_id: 42, email: 'a42@example.com', first_name: 'Grace', last_name: 'Hopper' },
      { remote_id: 43, email: 'a43@example.com', first_name: 'Alan' },
    ];
    const file = t.write('rerun.ndjson', ndjson(...rows));
    const first = await loadJson(shop, 'customers', file);
    expect(first.summary).toMatchObject({ imported: 3, rejected: [] });
    const before = await t.all(shop.token, 'customers');
    expect(before).toHaveLength(3);

    const second = await loadJson(shop, 'customers', file);
    expect(second.code).toBe(0);
    expect(second.summary).toMatchObject({ imported: 3, rejected: [] });
    const after = await t.all(shop.token, 'customers');
    expect(withoutUpdatedAt(after)).toEqual(withoutUpdatedAt(before));

    // The platform changed one customer: only that customer's field changes.
    t.write('rerun.ndjson', ndjson(rows[0], { ...rows[1], first_name: 'Rear Admiral Grace' }, rows[2]));
    expect((await loadJson(shop, 'customers', file)).summary).toMatchObject({ imported: 3, rejected: [] });
    const changed = await t.all(shop.token, 'customers');
    expect(changed).toHaveLength(3);
    expect(changed[1]).toEqual({ ...before[1], first_name: 'Rear Admiral Grace', updated_at: expect.any(String) });
    expect(withoutUpdatedAt([changed[0], changed[2]])).toEqual(withoutUpdatedAt([before[0], before[2]]));
  });

  it('rejects bad NDJSON lines by line number, with the reasons the API gives, and imports the rest', async () => {
    const shop = await t.createShop();
    const lines = [
      /* 1 */ { remote_id: 10, email: 'ten@example.com' },
      /* 2 */ '{"remote_id": 11,',
      /* 3 */ '[1, 2]',
      /* 4 */ '',
      /* 5 */ { remote_id: 12, email: 'not-an-email' },
      /* 6 */ { email: 'no-id@example.com' },
      /* 7 */ { remote_id: '13', email: 'string-id@example.com' },
      /* 8 */ { remote_id: 14, surprise: 1 },
      /* 9 */ { remote_id: 15, birthday: '1990-02-30' },
      /* 10 */ { remote_id: 16, first_name: 42 },
      /* 11 */ { remote_id: 17, email: 'TEN@example.com' },
      /* 12 */ { remote_id: 18, first_name: 'Last good line' },
      /* 13 */ { remote_id: 0 },
    ];
    const file = t.write('bad.ndjson', ndjson(...lines));
    const { code, summary } = await loadJson(shop, 'customers', file);
    expect(code).toBe(3);
    expect(summary.imported).toBe(2);
    expect(summary.rejected.map((r) => r.line)).toEqual([2, 3, 5, 6, 7, 8, 9, 10, 11, 13]);
    const reason = (line: number) => summary.rejected.find((r) => r.line === line)!.reason;
    expect(reason(2)).toMatch(/^invalid JSON: /);
    expect(reason(3)).toBe('a line must hold one JSON object');
    expect(reason(6)).toMatch(/^remote_id: /);
    expect(reason(7)).toMatch(/^remote_id: /);
    expect(reason(13)).toMatch(/^remote_id: /);
    // The same validation as PUT /customers/{remote_id}: strict types, formats, unknown fields, unique e-mail.
    for (const line of [5, 8, 9, 10, 11]) {
      const { remote_id, ...body } = lines[line - 1] as { remote_id: number };
      expect(reason(line), `line ${line}`).toBe(await putReason(shop, 'customers', remote_id, body));
    }
    expect(reason(11)).toMatch(/^email: Another customer of this shop already has this email/);

    expect((await t.all(shop.token, 'customers')).map((c) => c.remote_id)).toEqual([10, 18]);

    // For people: one line per rejected row, naming its line; re-running gives the same answer.
    const human = await load(shop, 'customers', file);
    expect(human.code).toBe(3);
    const out = human.stdout.split('\n');
    expect(out[0]).toMatch(/^Imported 2 customers, rejected 10 rows/);
    expect(out).toContain('  line 3: a line must hold one JSON object');
    expect(out).toContain(`  line 9: ${reason(9)}`);
    expect(out.filter((l) => l.startsWith('  line '))).toHaveLength(10);
    expect(await t.all(shop.token, 'customers')).toHaveLength(2);
  });

  it('treats repeated remote_ids as PUTs in file order: the last wins, a rejected later line leaves the earlier one', async () => {
    const shop = await t.createShop();
    const file = t.write(
      'repeats.ndjson',
      ndjson(
        { remote_id: 30, email: 'taken@example.com', first_name: 'Holder' },
        { remote_id: 31, first_name: 'Old' },
        { remote_id: 31, first_name: 'New' },
        { remote_id: 32, email: 'x32@example.com', first_name: 'First' },
        { remote_id: 32, email: 'TAKEN@example.com', first_name: 'Second' },
      ),
    );
    const { code, summary } = await loadJson(shop, 'customers', file);
    expect(code).toBe(3);
    expect(summary.imported).toBe(4);
    expect(summary.rejected).toEqual([{ line: 5, reason: expect.stringMatching(/^email: Another customer/) }]);
    expect((await t.get(shop.token, 'customers/31')).body.data.first_name).toBe('New');
    expect((await t.get(shop.token, 'customers/32')).body.data).toMatchObject({ email: 'x32@example.com', first_name: 'First' });
    expect(await t.all(shop.token, 'customers')).toHaveLength(3);
  });

  it('numbers CSV rows by their line in the file (the header is line 1) and imports the good ones', async () => {
    const shop = await t.createShop();
    const csv = [
      /* 1 */ 'remote_id,email,first_name,last_name',
      /* 2 */ '20,twenty@example.com,Twenty,"Two',
      /* 3 */ 'lines"',
      /* 4 */ '21,bad-email,X,Y',
      /* 5 */ '',
      /* 6 */ '22,t22@example.com,Only three',
      /* 7 */ '23,t23@example.com,A,B,extra',
      /* 8 */ '24,t24@ex"ample.com,A,B',
      /* 9 */ '25,t25@example.com,Good,Row',
      /* 10 */ 'abc,t26@example.com,A,B',
      /* 11 */ '27,t27@example.com,,',
      /* 12 */ '28,"bad',
      /* 13 */ 'email",A,B',
      /* 14 */ '29,t29@example.com,12.5,B',
    ].join('\n');
    const { code, summary } = await loadJson(shop, 'customers', t.write('lines.csv', csv));
    expect(code).toBe(3);
    expect(summary.rejected.map((r) => r.line)).toEqual([4, 6, 7, 8, 10, 12]);
    const reason = (line: number) => summary.rejected.find((r) => r.line === line)!.reason;
    expect(reason(4)).toMatch(/^email: /);
    expect(reason(6)).toBe('expected 4 cells as in the header line, got 3');
    expect(reason(7)).toBe('expected 4 cells as in the header line, got 5');
    expect(reason(8)).toMatch(/^invalid CSV: /);
    expect(reason(10)).toMatch(/^remote_id: /);
    expect(reason(12)).toMatch(/^email: /);
    expect(summary.imported).toBe(4);
    const rows = await t.all(shop.token, 'customers');
    expect(rows.map((c) => c.remote_id)).toEqual([20, 25, 27, 29]);
    expect(rows[0]).toMatchObject({ last_name: 'Two\nlines' });
    expect(rows[2]).toMatchObject({ first_name: null, last_name: null });
    // A text field keeps a number-like cell as text.
    expect(rows[3]).toMatchObject({ first_name: '12.5' });

    // Cells of a numeric field must hold what the API accepts there.
    const orders = [
      'remote_id,customer_remote_id,total,currency,financial_status,placed_at',
      '1,12.5,10,EUR,paid,2026-01-15T12:00:00Z',
      '2,1,10.001,EUR,paid,2026-01-15T12:00:00Z',
      '3,1,ten,EUR,paid,2026-01-15T12:00:00Z',
      '4,1,10,EUR,paid,yesterday',
      '5,1,10,EUR,paid,2026-01-15T12:00:00Z',
    ];
    const result = await loadJson(shop, 'orders', t.write('bad-orders.csv', orders.join('\n')));
    expect(result.summary.imported).toBe(1);
    expect(result.summary.rejected.map((r) => [r.line, r.reason.split(':')[0]])).toEqual([
      [2, 'customer_remote_id'],
      [3, 'total'],
      [4, 'total'],
      [5, 'placed_at'],
    ]);
    expect(result.summary.rejected[1]!.reason).toBe(
      await putReason(shop, 'orders', 2, {
        customer_remote_id: 1,
        total: 10.001,
        currency: 'EUR',
        financial_status: 'paid',
        placed_at: '2026-01-15T12:00:00Z',
      }),
    );
    expect((await t.all(shop.token, 'orders')).map((o) => o.remote_id)).toEqual([5]);
  });

  it('refuses bad arguments with a clear message, a non-zero exit and nothing written', async () => {
    const shop = await t.createShop();
    const id = String(shop.shop.id);
    const good = t.write('good.ndjson', ndjson({ remote_id: 1, email: 'ada@example.com' }));
    const sheet = t.write('customers.xlsx', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00]));
    const count = async () => Number((await sql<{ n: number }>`select count(*) as n from customers`.execute(t.database.db)).rows[0]!.n);
    const before = await count();
    // Exit 2 is bad input (src/main.ts); the argument parser's own errors exit 1.
    const cases: [string[], RegExp, number][] = [
      [['import', 'rewards', good, '--shop', id], /resource must be one of customers, orders, subscription_contracts, got "rewards"/, 2],
      [['import', 'frobs', good, '--shop', id], /resource must be one of customers, orders, subscription_contracts, got "frobs"/, 2],
      [['import', 'customers', `${t.dir}/missing.ndjson`, '--shop', id], /no such file: .*missing\.ndjson/, 2],
      [['import', 'customers', t.dir, '--shop', id, '--format', 'ndjson'], /no such file/, 2],
      [['import', 'customers', good, '--shop', '999999'], /no shop with id 999999/, 2],
      [['import', 'customers', good, '--shop', 'abc'], /--shop must be a positive integer, got "abc"/, 2],
      [['import', 'customers', sheet, '--shop', id], /unsupported file format: .*customers\.xlsx/, 2],
      [['import', 'customers', good, '--shop', id, '--format', 'xml'], /--format must be one of ndjson, csv, got "xml"/, 2],
      [['import', 'customers', good], /required option '--shop <id>'/, 1],
      [['import', 'customers', '--shop', id], /missing required argument 'file'/, 1],
    ];
    const results = await Promise.all(cases.map(([args]) => t.run(...args)));
    for (const [i, [args, message, exit]] of cases.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).toBe(exit);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
      expect(result.stdout, args.join(' ')).toBe('');
    }
    expect(await count()).toBe(before);
    expect(await t.all(shop.token, 'customers')).toEqual([]);
  });

  it('reads .jsonl as NDJSON, and any file name with --format', async () => {
    const shop = await t.createShop();
    const jsonl = t.write('c.jsonl', ndjson({ remote_id: 1 }));
    const txt = t.write('c.txt', 'remote_id,first_name\n2,Grace\n');
    expect((await loadJson(shop, 'customers', jsonl)).summary.imported).toBe(1);
    expect((await loadJson(shop, 'customers', txt, '--format', 'csv')).summary.imported).toBe(1);
    expect((await t.get(shop.token, 'customers/2')).body.data.first_name).toBe('Grace');
  });

  it('imports a large file across several write batches', async () => {
    const shop = await t.createShop();
    const total = 20_501;
    const lines: string[] = [];
    for (let line = 1; line <= total; line++) {
      if (line === 20_300) lines.push(JSON.stringify({ remote_id: line, email: 'not an e-mail' }));
      else if (line === total) lines.push(JSON.stringify({ remote_id: 5, first_name: 'Late' }));
      else lines.push(JSON.stringify({ remote_id: line, email: `c${line}@example.com`, first_name: `First ${line}`, last_name: 'Bulk' }));
    }
    const { code, summary } = await loadJson(shop, 'customers', t.write('large.ndjson', `${lines.join('\n')}\n`));
    expect(code).toBe(3);
    expect(summary.imported).toBe(total - 1);
    expect(summary.rejected).toEqual([{ line: 20_300, reason: expect.stringMatching(/^email: /) }]);
    const all = await t.all(shop.token, 'customers');
    expect(all).toHaveLength(total - 2); // less the rejected line and the repeat of remote_id 5
    expect(all.find((c) => c.remote_id === 5)).toMatchObject({ first_name: 'Late', email: null });
    expect(all.find((c) => c.remote_id === 20_299)).toMatchObject({ email: 'c20299@example.com' });
    // The import ends by analysing the table it filled, so the planner knows its new size at once.
    const analysed =
      TEST_DIALECT === 'sqlite'
        ? sql<{ rows: number }>`select cast(stat as integer) as rows from sqlite_stat1 where tbl = 'customers' and idx = 'customers'`
        : sql<{ rows: number }>`select reltuples as rows from pg_class where relname = 'customers'`;
    expect(Number((await analysed.execute(t.database.db)).rows[0]?.rows)).toBeGreaterThan(20_000);
  });
});
