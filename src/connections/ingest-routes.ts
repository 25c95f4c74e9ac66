import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { parseRemoteId } from '../core/ids.js';
import type { AuthFailures } from '../http/auth-failures.js';
import { errorRef, PathId } from '../http/schemas.js';
import { PLATFORMS, type Platform } from '../records/resources/connections.js';
import { ingest } from './ingest.js';
import { IngestAnswer } from './schemas.js';

// Where connected stores send their webhooks: POST /ingest/v1/{shopify|woocommerce}/{id}. The
// body is read as bytes (any content type, up to 2 MB: Shopify's orders can be large), since the
// signature is over the bytes as sent and is checked before anything is parsed.

export const INGEST_PREFIX = '/ingest/v1';

/** Bodies up to 2 MiB. */
export const INGEST_BODY_LIMIT = 2 * 1024 * 1024;

const TITLES: Record<Platform, { title: string; header: string }> = {
  shopify: { title: 'Shopify', header: 'X-Shopify-Hmac-Sha256' },
  woocommerce: { title: 'WooCommerce', header: 'X-WC-Webhook-Signature' },
};

export function registerIngestRoutes(server: FastifyInstance, failures: AuthFailures): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: INGEST_BODY_LIMIT }, (_request, body, done) => done(null, body));
  for (const platform of PLATFORMS) {
    const { title, header } = TITLES[platform];
    app.post(
      `/${platform}/:id`,
      {
        bodyLimit: INGEST_BODY_LIMIT,
        // A path id that is no id is an unknown connection: the same 401 as a bad signature.
        attachValidation: true,
        schema: {
          tags: ['Ingest'],
          summary: `Receive a ${title} webhook`,
          description:
            `Paste this address (a connection's \`ingest_url\`) into ${title}'s webhook settings. \`${header}\` must be base64(HMAC-SHA256(secret, raw body)); ` +
            'a bad or missing signature and an unknown connection answer the same 401. Answers 200 with what the delivery did, 410 once the app is uninstalled, ' +
            '503 with Retry-After while the connection is paused or the service cannot write (the platform retries). docs/connections.md.',
          security: [],
          params: Type.Object({ id: PathId("The connection's id", 42) }),
          response: {
            200: IngestAnswer,
            401: errorRef(401, {
              name: 'InvalidSignature',
              description: 'The signature does not match, or there is no such connection',
              codes: ['invalid_signature'],
            }),
            410: errorRef(410, { name: 'ConnectionUninstalled', description: 'The app was uninstalled from the store', codes: ['connection_uninstalled'] }),
            413: errorRef(413, { name: 'IngestTooLarge', description: 'The body is over 2 MB', codes: ['payload_too_large'] }),
            429: errorRef(429, {
              name: 'IngestRateLimited',
              description: 'Too many failed signatures from this address; see Retry-After',
              codes: ['rate_limited'],
            }),
            503: errorRef(503, {
              name: 'IngestUnavailable',
              description: 'The connection is paused, or the service cannot write now; see Retry-After (the platform retries)',
              codes: ['unavailable'],
            }),
          },
        },
      },
      async (request) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const status = await ingest(
          { db: app.db, clock: app.clock, config: app.config, failures },
          { platform, id: parseRemoteId(String(request.params.id)), headers: request.headers, raw, ip: request.ip },
        );
        return { status };
      },
    );
  }
}
