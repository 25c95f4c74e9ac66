import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';
import { signCustomerToken } from './customer-tokens.js';
import { demoStorefront } from './demo.js';

// The panel (<loyalty-panel>, panel/src/), built by `npm run build` into dist/panel, served as
// one ES module; and the demo page that hosts it for the demo shop's customer.

const DEMO_TOKEN_TTL_SECONDS = 15 * 60;

/** The package root: the nearest folder above this module that holds package.json. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

export const PANEL_BUNDLE = path.join(packageRoot(), 'dist', 'panel', 'loyalty.js');

function demoPage(publishableKey: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Loyalty panel demo</title>
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}</style></head>
<body>
<h1>Your rewards</h1>
<p>The <code>&lt;loyalty-panel&gt;</code> web component, signed in as the demo shop's customer with the most points.</p>
<loyalty-panel api-base="" publishable-key="${publishableKey}" token-url="/storefront/demo/token"></loyalty-panel>
<script type="module" src="/storefront/loyalty.js"></script>
</body>
</html>
`;
}

export function registerPanelRoutes(app: FastifyInstance): void {
  let bundle: Buffer | undefined;
  app.get('/storefront/loyalty.js', { schema: { hide: true } }, async (_request, reply) => {
    bundle ??= fs.existsSync(PANEL_BUNDLE) ? fs.readFileSync(PANEL_BUNDLE) : undefined;
    if (bundle === undefined) throw notFound('file', '/storefront/loyalty.js (run npm run build)');
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*').send(bundle);
  });

  app.get('/storefront/demo', { schema: { hide: true } }, async (_request, reply) => {
    const demo = await demoStorefront(app.db);
    if (demo === undefined) throw notFound('page', '/storefront/demo');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(demoPage(demo.key.publishable_key));
  });

  app.get('/storefront/demo/token', { schema: { hide: true } }, async (_request, reply) => {
    const demo = await demoStorefront(app.db);
    if (demo === undefined) throw notFound('page', '/storefront/demo/token');
    const { token } = await signCustomerToken(demo.key, demo.remoteId, app.clock(), DEMO_TOKEN_TTL_SECONDS);
    return reply.header('cache-control', 'no-store').send({ token });
  });
}
