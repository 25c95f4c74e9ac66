import { describe, expect, it } from 'vitest';
import { mb } from '../../bench/lib/server.js';
import { readSlowlyWithPeak, send } from '../helpers/download.js';
import { TEST_DIALECT } from '../helpers/database.js';
import { startWithShop } from '../helpers/server.js';

// The CSV export of 200,000 points events, read by a slow client over a real socket: the
// server walks the list a page at a time and holds back while the client does not read, so its
// memory grows by far less than the document it sends.

const EVENTS = 200_000;
const BATCH = 1000;
const NOTE = 'Goodwill points after the delivery of order 1234 arrived late; agreed with the customer on the phone.';

describe(`points events CSV export memory (${TEST_DIALECT})`, () => {
  it(`streams an export of ${EVENTS} events with the server's memory bounded`, { timeout: 300_000 }, async () => {
    const { server, token } = await startWithShop();
    const pid = server.child.pid!;
    try {
      for (let c = 1; c <= 20; c++) await send(server.url, token, 'PUT', `/customers/${c}`, { email: `c${c}@example.com` });
      const batch = {
        points_events: Array.from({ length: BATCH }, (_, i) => ({
          customer_identifier: String((i % 20) + 1),
          source: 'manual',
          points_amount: 1,
          internal_note: NOTE,
        })),
      };
      for (let i = 0; i < EVENTS / BATCH; i++) await send(server.url, token, 'POST', '/points_events/batch', batch);

      // One customer's export first (a twentieth of the events): the code the export runs is
      // loaded and V8's young generation has been through its collections before the baseline,
      // the highest RSS seen during it. A streaming server stays there for the whole list; one
      // that holds the document grows by several times the difference.
      const small = await readSlowlyWithPeak(server.url, token, '/exports/points_events.csv?customer_identifier=1', pid);
      expect(small.download.status).toBe(200);
      expect(small.download.body.toString('utf8').split('\r\n')).toHaveLength(EVENTS / 20 + 2);
      const before = small.peak;
      const { download, peak } = await readSlowlyWithPeak(server.url, token, '/exports/points_events.csv', pid);

      expect(download.status).toBe(200);
      expect(download.headers['transfer-encoding']).toBe('chunked');
      const lines = download.body.toString('utf8').split('\r\n');
      expect(lines[0]).toMatch(/^id,customer\.remote_id,/);
      // The header, one row per event, and the empty string after the last CRLF.
      expect(lines).toHaveLength(EVENTS + 2);
      expect(lines.at(-2)).toContain(NOTE);
      const size = download.body.length;
      const growth = peak - before;
      console.log(
        `CSV export (${TEST_DIALECT}): document ${mb(size)}; server RSS ${mb(before)} at most exporting one customer, ${mb(peak)} at most exporting all, growth ${mb(growth)}`,
      );
      expect(growth).toBeLessThan(size / 4);
    } finally {
      await server.stop();
    }
  });
});
