import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { AggregatorRegistry, Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The message a worker of `loyalty serve --workers` sends its primary for /metrics, and the reply's type. */
export const METRICS_REQUEST = 'loyalty:metrics';

export interface MetricsReply {
  type: typeof METRICS_REQUEST;
  id: number;
  text?: string;
  error?: string;
}

const PRIMARY_TIMEOUT_MS = 6000;

/**
 * In a worker of a cluster, /metrics answers for the whole server: the primary gathers every
 * worker's registry and aggregates them (cli/cluster.ts): counters and histograms summed, each
 * default process metric by its own rule (prom-client's aggregators).
 */
function clusterMetrics(registry: Registry): () => Promise<string> {
  new AggregatorRegistry(); // in a worker: answers the primary's requests for this process's metrics
  AggregatorRegistry.setRegistries([registry]);
  const waiting = new Map<number, (reply: MetricsReply) => void>();
  let nextId = 0;
  process.on('message', (message: MetricsReply) => {
    if (message?.type === METRICS_REQUEST) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => settle({ type: METRICS_REQUEST, id, error: 'the primary process did not answer' }), PRIMARY_TIMEOUT_MS);
      const settle = (reply: MetricsReply) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (reply.text !== undefined) resolve(reply.text);
        else reject(new Error(`metrics of the workers: ${reply.error ?? 'no answer'}`));
      };
      waiting.set(id, settle);
      process.send!({ type: METRICS_REQUEST, id });
    });
}

/** Prometheus metrics: requests by route and status, latency histograms, process metrics. */
export function registerMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests by route and status', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });

  // The labelled series of each method, route and status, made once rather than a label object
  // per response. Routes are the registered patterns, so there are few.
  const series = new Map<string, { requests: ReturnType<typeof requests.labels>; duration: ReturnType<typeof duration.labels> }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let s = series.get(key);
    if (s === undefined) {
      const labels = { method: request.method, route, status_code: String(reply.statusCode) };
      series.set(key, (s = { requests: requests.labels(labels), duration: duration.labels(labels) }));
    }
    s.requests.inc();
    s.duration.observe(reply.elapsedTime / 1000);
    done();
  });

  const metrics = cluster.isWorker ? clusterMetrics(registry) : () => registry.metrics();
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return metrics();
  });
  return registry;
}
