import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { ErrorResponse } from './schemas.js';

export const API_PREFIX = '/merchant_api/v1';

/**
 * The OpenAPI 3.1 document is generated from the same route schemas that validate requests
 * and serialise responses; /docs renders it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(ErrorResponse);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Loyalty API',
        version: '1.0.0',
        description:
          'Grant and deduct loyalty points and store credit, one event at a time or in all-or-nothing batches, ' +
          'and read everything back through exact cursor or offset pagination.\n\n' +
          'Authenticate with `Authorization: Bearer <token>` (the bare token works too). ' +
          'Every write accepts an `Idempotency-Key` header: a retry with the same key replays the first response ' +
          'with `Idempotent-Replayed: true` and changes nothing.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: 'http://localhost:3000', description: 'Local server' }],
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A shop API token (`lty_…`), created with `loyalty tokens create`' },
        },
      },
      security: [{ bearerAuth: [] }],
      tags: [
        { name: 'Shop', description: 'The authenticated shop and its settings' },
        { name: 'Customers', description: 'Customers synced from the commerce platform, with their balances' },
        { name: 'Operations', description: 'Health and readiness probes' },
      ],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  await app.register(apiReference, {
    routePrefix: '/docs',
    configuration: { title: 'Loyalty API reference', url: '/openapi.json' } as never,
    logLevel: 'warn',
  });
}
