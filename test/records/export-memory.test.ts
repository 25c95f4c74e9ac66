import { describe, expect, it } from 'vitest';
import { mb } from '../../bench/lib/server.js';
import { readSlowly, readSlowlyWithPeak, rss, send } from '../helpers/download.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { startWithShop } from '../helpers/server.js';
import { loyalty } from '../ledger/fixtures.js';

// The export of a customer with 100,000 points events, a document of tens of MB, read by a slow
// client over a real socket: the server streams it, holding back while the client does not read,
// so that its memory grows by far less than the document it sends (a server that builds the
// document first grows by several times its size).
//
// The server runs as `npm start` runs it, with a 256 MB V8 heap limit (bench/lib/server.ts,
// SERVE_NODE_ARGS). Without one, on a machine with gigabytes to spare, V8 lets garbage pile up
// to several times the live heap before it collects (40 to 70 MB here, whatever the request),
// which would drown what the export holds.

const EVENTS = 100_000;
const BATCH = 1000;
/** 200 characters on every event, so that the document weighs tens of MB. */
const NOTE = 'Goodwill points after the delivery of order 1234 arrived late; agreed with the customer on the phone. '.repeat(2);

describe(`customer export memory (${TEST_DIALECT})`, () => {
  it(`streams the export of ${EVENTS} events with the server's memory bounded`, { timeout: 180_000 }, async () => {
    const { server, token, url } = await startWithShop();
    const pid = server.child.pid!;

    let started = performance.now();
    await send(server.url, token, 'PUT', '/customers/1', { email: 'big@example.com', first_name: 'Big' });
    await send(server.url, token, 'PUT', '/customers/2', { email: 'small@example.com', first_name: 'Small' });
    const events = (customer: string, count: number) => ({
      points_events: Array.from({ length: count }, () => ({ customer_identifier: customer, source: 'manual', points_amount: 1, internal_note: NOTE })),
    });
    await send(server.url, token, 'POST', '/points_events/batch', events('2', 10));
    const batch = events('1', BATCH);
    for (let i = 0; i < EVENTS / BATCH; i++) await send(server.url, token, 'POST', '/points_events/batch', batch);
    const seeding = (performance.now() - started) / 1000;

    // A small export first, so that the code the export runs is loaded before the baseline.
    expect((await readSlowly(server.url, token, '/customers/2/export')).status).toBe(200);
    const before = rss(pid);
    started = performance.now();
    const { download, peak } = await readSlowlyWithPeak(server.url, token, '/customers/1/export', pid);
    const exporting = (performance.now() - started) / 1000;

    expect(download.status).toBe(200);
    expect(download.headers['content-length']).toBeUndefined();
    expect(download.headers['transfer-encoding']).toBe('chunked');
    const size = download.body.length;
    const { data } = JSON.parse(download.body.toString('utf8'));
    expect(data.customer).toMatchObject({ remote_id: 1, email: 'big@example.com', points_balance: EVENTS });
    expect(data.points_events).toHaveLength(EVENTS);
    expect(
      data.points_events.every((e: { customer: { remote_id: number }; internal_note: string }) => e.customer.remote_id === 1 && e.internal_note === NOTE),
    ).toBe(true);
    expect(data.points_lots).toHaveLength(EVENTS);

    const growth = peak - before;
    console.log(
      `export (${TEST_DIALECT}): document ${mb(size)} (${size} B); server RSS ${mb(before)} before, ${mb(peak)} at most, growth ${mb(growth)} (${growth} B); ` +
        `seeding ${seeding.toFixed(1)} s, export ${exporting.toFixed(1)} s`,
    );
    expect(growth).toBeLessThan(size / 2);

    expect(await loyalty(url, 'verify')).toMatchObject({ code: 0 });
  });
});
