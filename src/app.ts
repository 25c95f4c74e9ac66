import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger as PinoLogger } from 'pino';
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import type { DB } from './db/tables.js';
import { authFailuresOf, registerAuth } from './http/auth.js';
import { clientErrorHandler, frameworkError, registerErrorHandling } from './http/error-handler.js';
import { registerHealth } from './http/health.js';
import { registerJsonBody } from './http/json-body.js';
import { checkRequest } from './http/request-checks.js';
import { nullableSerializer } from './http/serializer.js';
import { registerMetrics } from './http/metrics.js';
import { registerEventStream } from './events/stream.js';
import { API_PREFIX, registerOpenApi, STOREFRONT_PREFIX } from './http/openapi.js';
import { registerLoadShedding } from './http/overload.js';
import { registerRateLimit } from './http/protection.js';
import { registerReadConnection } from './http/read-connection.js';
import { registerReadAfter } from './http/read-after.js';
import { PAGINATION_SCHEMAS } from './http/pagination.js';
import { validatorCompiler } from './http/validation.js';
import { registerRecordRoutes } from './records/routes.js';
import { registerLedgerRoutes } from './ledger/routes.js';
import { registerConsoleRoutes } from './console/routes.js';
import { registerCustomerRoutes } from './customers/routes.js';
import { registerEarningRoutes } from './earning/routes.js';
import { registerRedemptionRoutes } from './redemptions/routes.js';
import { registerReferralRoutes } from './referrals/routes.js';
import { registerShopRoutes } from './shops/routes.js';
import { registerStorefrontKeyRoutes } from './storefront/keys-routes.js';
import { registerPanelRoutes } from './storefront/panel-routes.js';
import { registerStorefrontRoutes } from './storefront/routes.js';
import { registerTierRoutes } from './tiers/routes.js';
import { fetchTransport, type WebhookTransport } from './webhooks/delivery.js';
import { registerWebhookRoutes } from './webhooks/routes.js';
import { registerReportRoutes } from './reports/routes.js';
import { registerExportRoutes } from './reports/export-routes.js';
import { registerAccessRoutes } from './access/routes.js';
import { registerConnectionRoutes } from './connections/routes.js';
import { INGEST_PREFIX, registerIngestRoutes } from './connections/ingest-routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    database: Database;
    db: DB;
    clock: Clock;
    webhookTransport: WebhookTransport;
  }
}

export interface AppDeps {
  database: Database;
  /** Defaults to the system clock; tests inject their own to move time. */
  clock?: Clock;
  /** Where logs go; defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  /** Sends webhook deliveries; defaults to fetch. Tests inject their own. */
  webhookTransport?: WebhookTransport;
}

// Random bytes for request ids are drawn 12 KiB at a time: one randomBytes call per request
// cost more than the rest of the id.
let idBytes = Buffer.alloc(0);
let idAt = 0;

function requestId(): string {
  if (idAt + 12 > idBytes.length) {
    idBytes = randomBytes(12 * 1024);
    idAt = 0;
  }
  idAt += 12;
  return `req_${idBytes.toString('base64url', idAt - 12, idAt)}`;
}

/** The one log line of a request. */
function logRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  // Nothing to build when info lines are not written (LOG_LEVEL=warn and above); shed
  // requests are counted, not logged one by one (http/overload.ts).
  if (!request.shed && (request.log as PinoLogger).isLevelEnabled('info')) {
    request.log.info(
      { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 },
      'request completed',
    );
  }
  done();
}

/** The only place a Fastify instance is made: the server, the CLI and the tests all use it. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      ...(deps.logStream ? { stream: deps.logStream } : {}),
      redact: ['req.headers.authorization'],
    },
    genReqId: requestId,
    // One log line per request, written by the onResponse hook below.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // While closing, new requests get 503 in the documented error shape (http/health.ts).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    frameworkErrors: frameworkError,
    // Slow or stalled clients are cut off (408); Node checks its timeouts every
    // connectionsCheckingInterval, so that is kept well below the shortest of them.
    requestTimeout: config.timeouts.requestMs,
    keepAliveTimeout: config.timeouts.keepAliveMs,
    http: {
      headersTimeout: config.timeouts.headersMs,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(config.timeouts.headersMs / 4))),
    },
    clientErrorHandler: clientErrorHandler(requestId),
    schemaController: { compilersFactory: { buildSerializer: nullableSerializer() } },
  });
  // Connections beyond the cap are closed as they arrive.
  app.server.maxConnections = config.maxConnections;

  app.decorate('config', config);
  app.decorate('database', deps.database);
  app.decorate('db', deps.database.db);
  app.decorate('clock', deps.clock ?? systemClock);
  app.decorate('webhookTransport', deps.webhookTransport ?? fetchTransport);

  app.setValidatorCompiler(validatorCompiler);
  for (const schema of PAGINATION_SCHEMAS) app.addSchema(schema);
  registerErrorHandling(app);
  registerJsonBody(app);

  // Callback hooks where nothing awaits: an async hook costs every request a promise and a turn.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', logRequest);

  const registry = registerMetrics(app);
  registerLoadShedding(app, config, registry, requestId);
  registerEventStream(config.eventStream.url, registry, deps.database.db);
  await registerOpenApi(app);
  registerHealth(app);
  registerReadAfter(app);

  // Failed authentications per address: unknown API tokens and bad signatures of store connections alike.
  const failures = authFailuresOf(app);
  await app.register(
    async (api) => {
      registerAuth(api, failures);
      await registerRateLimit(api, config);
      api.addHook('preValidation', checkRequest);
      registerReadConnection(api);
      registerShopRoutes(api);
      registerRecordRoutes(api);
      registerLedgerRoutes(api);
      registerRedemptionRoutes(api);
      registerEarningRoutes(api);
      registerReferralRoutes(api);
      registerTierRoutes(api);
      registerCustomerRoutes(api);
      registerWebhookRoutes(api);
      registerStorefrontKeyRoutes(api);
      registerReportRoutes(api);
      registerExportRoutes(api);
      registerAccessRoutes(api);
      registerConnectionRoutes(api);
    },
    { prefix: API_PREFIX },
  );
  await app.register(async (ingest) => registerIngestRoutes(ingest, failures), { prefix: INGEST_PREFIX });
  await app.register(async (storefront) => registerStorefrontRoutes(storefront), { prefix: STOREFRONT_PREFIX });
  registerPanelRoutes(app);

  if (config.console) await registerConsoleRoutes(app);

  await app.ready();
  return app;
}
