import cluster, { type Worker } from 'node:cluster';
import { pino } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../config.js';
import { connect } from '../db/connect.js';
import { migrateToLatest } from '../db/migrator.js';
import { METRICS_REQUEST, type MetricsReply } from '../http/metrics.js';
import { bootstrap, printWelcome } from './serve.js';

// `loyalty serve --workers N`: the primary process migrates the database once, then forks N
// workers that serve on the same port (node:cluster hands connections out in turn) and run the
// background jobs, which are safe in many processes (jobs.ts). It serves nothing itself: it
// restarts a worker that dies, aggregates /metrics for the worker asked, and on SIGTERM or SIGINT
// stops every worker gracefully, exiting once all have.

/** Wait before replacing a worker that died, so a worker that crashes at once does not spin. */
const RESTART_DELAY_MS = 1000;

export async function servePrimary(config: Config): Promise<void> {
  const log = pino({ level: config.logLevel });
  const database = connect(config.databaseUrl);
  let token: string | null;
  try {
    await migrateToLatest(database.db);
    token = await bootstrap(database.db, config, log);
  } finally {
    await database.close();
  }

  const listened = new WeakSet<Worker>();
  let stopping = false;
  let failed = false;
  const stopAll = (reason: string) => {
    if (stopping) return;
    stopping = true;
    const running = Object.keys(cluster.workers ?? {}).length;
    log.info({ reason, workers: running }, 'shutting down: stopping every worker');
    if (running === 0) process.exit(failed ? 1 : 0);
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    // The workers' own timeout ends them first; this one covers a worker that hangs anyway.
    setTimeout(() => {
      log.error('workers did not stop in time; killing them');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }, config.shutdownTimeoutMs + 2000).unref();
  };

  cluster.on('listening', (worker, address) => {
    if (!listened.has(worker) && token !== null) {
      printWelcome(config, address.port, token);
      token = null;
    }
    listened.add(worker);
  });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failed = true;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    // A worker that failed on its own before it listened will not do better the next time (a
    // port in use, a bad configuration): the server stops rather than restarting it forever.
    // One killed (by the OOM killer, an operator) is replaced like any other.
    if (!listened.has(worker) && signal === null) {
      log.error({ pid: worker.process.pid, code }, 'a worker failed before it listened; stopping');
      failed = true;
      return stopAll('a worker failed to start');
    }
    log.error({ pid: worker.process.pid, code, signal }, 'a worker exited; starting another');
    // Not unref'd: with every worker gone, this timer is what keeps the primary alive.
    setTimeout(() => stopping || cluster.fork(), RESTART_DELAY_MS);
  });
  answerMetricsRequests();

  process.on('SIGTERM', () => stopAll('SIGTERM'));
  process.on('SIGINT', () => stopAll('SIGINT'));
  for (let i = 0; i < config.workers; i++) {
    const worker = cluster.fork();
    // A worker that hangs while starting (a database that never answers, a lock never released)
    // would leave the command waiting forever: past the bound it says so and stops, exit 1.
    setTimeout(() => {
      if (listened.has(worker) || stopping || worker.isDead()) return;
      log.error(
        { pid: worker.process.pid, seconds: config.workerStartTimeoutMs / 1000 },
        'a worker did not listen in time (WORKER_START_TIMEOUT_MS); stopping',
      );
      failed = true;
      stopAll('a worker did not start in time');
    }, config.workerStartTimeoutMs).unref();
  }
  log.info({ workers: config.workers, port: config.port }, 'serving with workers');
  if (config.rateLimit.redisUrl === null)
    log.warn({ workers: config.workers }, 'each worker counts RATE_LIMIT_MAX on its own: set REDIS_URL to share one count per shop');
}

/** A worker's /metrics asks the primary, which gathers every worker's metrics and sums them. */
function answerMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: unknown; id: number }) => {
    if (message?.type !== METRICS_REQUEST) return;
    const reply = (answer: Omit<MetricsReply, 'type' | 'id'>) =>
      worker.isConnected() && worker.send({ type: METRICS_REQUEST, id: message.id, ...answer } satisfies MetricsReply);
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}
