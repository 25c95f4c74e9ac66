import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

// The interactive reference at /docs: Scalar's page, rendering the document at /openapi.json.
// Its script is the bundle @scalar/fastify-api-reference ships (3.4 MB), read from disk when
// asked for. The package's own plugin read it into a string at start and kept it (6.4 MB of
// heap, two bytes a character) with an OpenAPI parser it loaded for two routes of its own
// (/docs/openapi.json and .yaml), which the page never asked for and which answered 500 and
// an empty body here.

export const REFERENCE_PREFIX = '/docs';

/** Where the page loads its script from, relative to the page (/docs/). */
const SCRIPT = 'js/scalar.js';

/** The bundle, beside the package's entry point (the file its own plugin reads). */
export const REFERENCE_SCRIPT_FILE = path.join(path.dirname(createRequire(import.meta.url).resolve('@scalar/fastify-api-reference')), 'js', 'standalone.js');

/** The page the package's plugin wrote (@scalar/core's getHtmlDocument) for this configuration, titled by it (the plugin's said 'Scalar API Reference'). */
function page(configuration: { title: string } & Record<string, unknown>): string {
  const json = JSON.stringify(configuration, null, 2).replace(/\n/g, '\n      ').replace(/\s*}$/, '');
  return `<!doctype html>
<html>
  <head>
    <title>${configuration.title}</title>
    <meta charset="utf-8" />
    <meta
      name="viewport"
      content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <div id="app"></div>
    <!-- Load the Script -->
    <script src="${SCRIPT}"></script>

    <!-- Initialize the Scalar API Reference -->
    <script type="text/javascript">
      Scalar.createApiReference('#app', ${json}})
    </script>
  </body>
</html>`;
}

export function registerApiReference(app: FastifyInstance, documentUrl: string): void {
  if (!fs.existsSync(REFERENCE_SCRIPT_FILE)) throw new Error(`the API reference's script is missing: ${REFERENCE_SCRIPT_FILE}`);
  // The page works offline: no fonts from Scalar's CDN (withDefaultFonts), the system's instead.
  const html = page({ _integration: 'fastify', title: 'Loyalty API reference', url: documentUrl, withDefaultFonts: false });
  const options = { schema: { hide: true }, logLevel: 'warn' } as const;

  // The router ignores trailing slashes: /docs and /docs/ are this one route. The page's script
  // is relative to it, so /docs is sent to /docs/.
  app.get(REFERENCE_PREFIX, options, (request, reply) => {
    const { pathname } = new URL(request.url, 'http://localhost');
    if (!pathname.endsWith('/')) return reply.redirect(`${pathname}/`, 301);
    return reply.type('text/html; charset=utf-8').send(html);
  });

  app.get(`${REFERENCE_PREFIX}/${SCRIPT}`, options, async (request, reply) => {
    const file = await fs.promises.open(REFERENCE_SCRIPT_FILE);
    try {
      const stat = await file.stat();
      // Asked for again on each visit (its name does not change with the package's version), and answered 304 while it is the same file.
      const etag = `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`;
      reply.type('application/javascript; charset=utf-8').header('cache-control', 'no-cache').header('etag', etag);
      if (request.headers['if-none-match'] === etag) {
        await file.close();
        return reply.code(304).send();
      }
      return reply.header('content-length', stat.size).send(file.createReadStream());
    } catch (err) {
      await file.close();
      throw err;
    }
  });
}
