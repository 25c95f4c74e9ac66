import { execFile } from 'node:child_process';
import { MAIN } from '../../bench/lib/server.js';
import { expect } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { LightMyRequestResponse } from 'fastify';
import { API, type TestContext } from '../helpers/app.js';

// Small helpers shared by the ledger tests.

export async function createCustomers(t: TestContext, count: number, first = 1, token?: string): Promise<void> {
  for (let id = first; id < first + count; id++) {
    const res = await t.request('PUT', `${API}/customers/${id}`, { body: { email: `customer${id}@example.com` }, ...(token ? { token } : {}) });
    if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`customer ${id}: ${res.body}`);
  }
}

export function postEvent(t: TestContext, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse> {
  return t.request('POST', `${API}/points_events`, { body, ...(headers ? { headers } : {}) });
}

export function postBatch(t: TestContext, events: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse> {
  return t.request('POST', `${API}/points_events/batch`, { body: { points_events: events }, ...(headers ? { headers } : {}) });
}

export async function balanceOf(t: TestContext, customer: string | number, token?: string): Promise<{ points: number; credits: number }> {
  const res = await t.request('GET', `${API}/customers/${customer}`, token ? { token } : {});
  if (res.statusCode !== 200) throw new Error(`customer ${customer}: ${res.body}`);
  const data = res.json().data;
  return { points: data.points_balance, credits: data.credits_balance };
}

/** Rows of a ledger table for the shop, straight from the database. */
export async function countRows(t: TestContext, table: 'points_events' | 'points_lots' | 'lot_consumptions', shopId = t.shop.id): Promise<number> {
  const row = await t.database.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('shop_id', '=', shopId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** `loyalty verify` for the shop (or every shop): the ledger's invariants hold. */
export async function expectConsistentLedger(t: TestContext, shopId: number | null = t.shop.id): Promise<void> {
  expect(await verifyLedger(t.database.db, shopId)).toEqual([]);
}

/** The compiled `loyalty` command run on the test database, as an operator runs it. */
export function loyalty(databaseUrl: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [MAIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}
