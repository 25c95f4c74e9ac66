import type { FastifyInstance } from 'fastify';
import { pruneIdempotencyKeys } from './http/idempotency.js';
import { announceCampaigns, grantBirthdays, releasePendingPoints } from './earning/jobs.js';
import { recordsJson } from './records/resource.js';
import { campaigns } from './records/resources/campaigns.js';
import { sweepExpiredLots, sweepInactiveBalances } from './ledger/expiry.js';
import { pruneExpiryReminders, sendExpiryReminders } from './ledger/reminders.js';
import { retierShops } from './tiers/jobs.js';
import { deliverDueWebhooks } from './webhooks/delivery.js';
import { pruneDeliveries } from './webhooks/repository.js';
import { pruneAuditLog } from './shops/audit.js';
import { pruneBodies } from './connections/repository.js';
import { DAY_MS } from './clock.js';
import { DatabaseBusyError } from './db/connection-queue.js';
import { connect } from './db/connect.js';
import { isPostgres, optimizeDatabase } from './db/dialect.js';
import { StreamRelay } from './events/stream.js';
import { unavailability } from './db/unavailable.js';

// Background work that runs inside `loyalty serve`. Each job must be safe to run in several
// processes at once (they take a database lock or are idempotent).

export interface Job {
  name: string;
  intervalMs(app: FastifyInstance): number;
  run(app: FastifyInstance): Promise<unknown>;
}

export const jobs: Job[] = [
  {
    name: 'prune-idempotency-keys',
    intervalMs: () => 15 * 60_000,
    run: (app) => pruneIdempotencyKeys(app.db, app.clock() - app.config.idempotencyTtlHours * 3_600_000),
  },
  { name: 'expire-lots', intervalMs: (app) => app.config.expirySweepIntervalMs, run: (app) => sweepExpiredLots(app.db, app.clock()) },
  // Both find what is due through an index (migration 020) and claim it in the transaction that writes it.
  { name: 'expire-inactive-balances', intervalMs: (app) => app.config.expirySweepIntervalMs, run: (app) => sweepInactiveBalances(app.db, app.clock()) },
  { name: 'send-expiry-reminders', intervalMs: (app) => app.config.expirySweepIntervalMs, run: (app) => sendExpiryReminders(app.db, app.clock()) },
  // A reminder sent matters until the expiry it reminds of has passed: then it goes, in bounded batches.
  { name: 'prune-expiry-reminders', intervalMs: () => 60 * 60_000, run: (app) => pruneExpiryReminders(app.db, app.clock()) },
  // Both look at due rows only, through an index: running them often costs one index probe.
  { name: 'release-pending-points', intervalMs: (app) => app.config.expirySweepIntervalMs, run: (app) => releasePendingPoints(app.db, app.clock()) },
  { name: 'retier-customers', intervalMs: () => 5_000, run: (app) => retierShops(app.db, app.clock()) },
  { name: 'optimize-database', intervalMs: () => 3_600_000, run: (app) => optimizeDatabase(app.db) },
  // campaign.started and campaign.ended, each once, shown as GET /campaigns/{id} shows the campaign.
  {
    name: 'announce-campaigns',
    intervalMs: (app) => app.config.expirySweepIntervalMs,
    run: (app) => announceCampaigns(app.db, app.clock(), (trx, shopId, rows, now) => recordsJson(trx, shopId, campaigns, rows, now)),
  },
  { name: 'grant-birthdays', intervalMs: (app) => app.config.expirySweepIntervalMs, run: (app) => grantBirthdays(app.db, app.clock()) },
  {
    name: 'deliver-webhooks',
    intervalMs: (app) => app.config.webhooks.deliveryIntervalMs,
    run: (app) =>
      deliverDueWebhooks(app.db, {
        clock: app.clock,
        transport: app.webhookTransport,
        timeoutMs: app.config.webhooks.timeoutMs,
        batchSize: app.config.webhooks.batchSize,
        allowPrivateAddresses: app.config.webhooks.allowPrivateUrls,
      }),
  },
  {
    name: 'prune-webhook-deliveries',
    intervalMs: () => 60 * 60_000,
    run: (app) => pruneDeliveries(app.db, app.clock() - app.config.webhooks.retentionDays * DAY_MS),
  },
  // The kept bodies of store connections' deliveries, a bounded batch at a time; each delivery's record stays.
  {
    name: 'prune-connection-bodies',
    intervalMs: () => 60 * 60_000,
    run: (app) => pruneBodies(app.db, app.clock() - app.config.connectionRetentionDays * DAY_MS),
  },
  {
    name: 'prune-audit-log',
    intervalMs: () => 60 * 60_000,
    run: (app) => pruneAuditLog(app.db, app.clock() - app.config.auditRetentionDays * DAY_MS),
  },
];

/** Starts every job on its interval; the returned function stops them and waits for runs in progress. */
export function startJobs(app: FastifyInstance, list: Job[] = jobs): () => Promise<void> {
  const running = new Set<Promise<unknown>>();
  const timers = list
    .filter((job) => job.intervalMs(app) > 0)
    .map((job) => {
      let busy = false;
      const tick = () => {
        if (busy) return;
        busy = true;
        const run = job
          .run(app)
          .catch((err) => {
            // The database being away, or too busy to lend a connection in time (overload), is not a
            // bug: the job runs again on its next tick.
            if (err instanceof DatabaseBusyError) app.log.warn({ job: job.name, cause: err.message }, 'background job skipped: the database is busy');
            else if (unavailability(err) !== null)
              app.log.warn({ job: job.name, cause: (err as Error).message }, 'background job skipped: the database is unavailable');
            else app.log.error({ err, job: job.name }, 'background job failed');
          })
          .finally(() => {
            busy = false;
            running.delete(run);
          });
        running.add(run);
      };
      const timer = setInterval(tick, job.intervalMs(app));
      timer.unref();
      setImmediate(tick);
      return timer;
    });
  return async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.allSettled([...running]);
  };
}

/**
 * The event stream's relay (events/stream.ts), in every serving process when EVENT_STREAM_URL is
 * set; the returned function stops it. Nothing without it. On PostgreSQL the relay has two
 * connections of its own: in the line of the API's write transactions (four connections) it
 * waited behind every batch in flight, over a second under the ledger's load, and fell behind by
 * as much. On SQLite, writes go through the process's one writer whatever the connection.
 */
export function startStreamRelay(app: FastifyInstance): () => Promise<void> {
  const { url, pollMs, leaseMs } = app.config.eventStream;
  if (url === null) return async () => {};
  const own = isPostgres(app.db) ? connect(app.config.databaseUrl, { poolSize: 2 }) : null;
  const relay = new StreamRelay(own?.db ?? app.db, { url, pollMs, leaseMs, clock: app.clock, log: app.log });
  relay.start();
  return async () => {
    await relay.stop();
    await own?.close();
  };
}
