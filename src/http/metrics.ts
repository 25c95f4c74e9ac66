import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { AggregatorRegistry, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { ReplicaStatus, Replicas } from '../db/replicas.js';

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

const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The requests of one method, route and status so far. */
interface Series {
  labels: Readonly<Record<'method' | 'route' | 'status_code', string>>;
  count: number;
  sum: number;
  /** Observations per bucket of DURATION_BUCKETS (not cumulative); past the last, only in count. */
  buckets: number[];
}

/**
 * http_requests_total and http_request_duration_seconds, kept as plain numbers per series and
 * given to prom-client's registry as metrics of its own shape (name, type, aggregator, get):
 * prom-client's Counter and Histogram check and hash the labels at every observation, even
 * through a labelled child, which cost every request 5-7 µs of CPU. A worker's registry is
 * summed by the primary (aggregator `sum`), as prom-client's own counters and histograms are.
 */
function requestMetrics(registry: Registry): (method: string, route: string, status: number, seconds: number) => void {
  // Routes are the registered patterns, so there are few series.
  const series = new Map<string, Series>();
  const all = () => [...series.values()];
  const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => object[]) => {
    const data = () => ({ name, help, type, aggregator: 'sum' as const, values: values() });
    registry.registerMetric({ name, help, type, aggregator: 'sum', get: async () => data() } as unknown as Metric);
  };
  metric('http_requests_total', 'HTTP requests by route and status', 'counter', () => all().map((s) => ({ labels: s.labels, value: s.count })));
  const name = 'http_request_duration_seconds';
  metric(name, 'HTTP request latency by route and status', 'histogram', () =>
    all().flatMap((s) => {
      let cumulative = 0;
      return [
        ...DURATION_BUCKETS.map((le, i) => ({ metricName: `${name}_bucket`, labels: { ...s.labels, le }, value: (cumulative += s.buckets[i]!) })),
        { metricName: `${name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count },
        { metricName: `${name}_sum`, labels: s.labels, value: s.sum },
        { metricName: `${name}_count`, labels: s.labels, value: s.count },
      ];
    }),
  );
  return (method, route, status, seconds) => {
    const key = `${method} ${status} ${route}`;
    let s = series.get(key);
    if (s === undefined)
      series.set(key, (s = { labels: { method, route, status_code: String(status) }, count: 0, sum: 0, buckets: DURATION_BUCKETS.map(() => 0) }));
    s.count++;
    s.sum += seconds;
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[bucket]!) bucket++;
    if (bucket < DURATION_BUCKETS.length) s.buckets[bucket]!++;
  };
}

/**
 * Each read replica's lag (seconds; for one that is down, since it last answered) and whether it
 * serves reads, by replica (host:port). In a cluster the primary shows the workers' worst.
 */
function replicaMetrics(registry: Registry, replicas: Replicas): void {
  const gauge = (name: string, help: string, aggregator: 'max' | 'min', value: (s: ReplicaStatus) => number) =>
    registry.registerMetric({
      name,
      help,
      type: 'gauge',
      aggregator,
      get: async () => ({ name, help, type: 'gauge', aggregator, values: replicas.statuses().map((s) => ({ labels: { replica: s.name }, value: value(s) })) }),
    } as unknown as Metric);
  gauge('loyalty_replica_lag_seconds', "A read replica's lag behind the primary", 'max', (s) => s.lagMs / 1000);
  gauge('loyalty_replica_up', 'Whether a read replica serves reads (1) or is left out, lagging or down (0)', 'min', (s) => (s.state === 'up' ? 1 : 0));
}

/** Prometheus metrics: requests by route and status, latency histograms, process metrics. */
export function registerMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const observe = requestMetrics(registry);
  if (app.database.replicas !== null) replicaMetrics(registry, app.database.replicas);
  app.addHook('onResponse', (request, reply, done) => {
    observe(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  const metrics = cluster.isWorker ? clusterMetrics(registry) : () => registry.metrics();
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return metrics();
  });
  return registry;
}
