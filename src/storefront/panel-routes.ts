import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../errors.js';
import { signCustomerToken } from './customer-tokens.js';
import { demoStorefront, type DemoStorefront } from './demo.js';

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

// The console's star (console/public/favicon.svg), in the page itself: it works with the
// console turned off, and the browser asks for no /favicon.ico, which would be a 404.
const ICON =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/>' +
      '<path d="M16 6l2.9 6.1 6.6.8-4.9 4.6 1.3 6.6L16 20.8l-5.9 3.3 1.3-6.6-4.9-4.6 6.6-.8z" fill="#fff"/></svg>',
  );

const esc = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function demoPage(demo: DemoStorefront): string {
  const hello = demo.firstName === null ? 'Welcome back' : `Welcome back, ${esc(demo.firstName)}`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Your rewards · ${esc(demo.shopName)}</title>
<link rel="icon" type="image/svg+xml" href="${ICON}">
<style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}</style></head>
<body>
<h1>Your rewards at ${esc(demo.shopName)}</h1>
<p>${hello}. Earn points with every order, then spend them on the rewards below.</p>
<loyalty-panel api-base="" publishable-key="${demo.key.publishable_key}" token-url="/storefront/demo/token"></loyalty-panel>
<script type="module" src="/storefront/loyalty.js"></script>
</body>
</html>
`;
}

/** The demo customer a browser was shown first, kept in a cookie so that a reload shows the same one. */
const DEMO_COOKIE = 'loyalty_demo_customer';

async function demoFor(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, path: string): Promise<DemoStorefront> {
  const kept = new RegExp(`(?:^|;\\s*)${DEMO_COOKIE}=(\\d{1,15})(?:;|$)`).exec(request.headers.cookie ?? '')?.[1];
  const demo = await demoStorefront(app.db, kept === undefined ? undefined : Number(kept));
  if (demo === undefined) throw notFound('page', path);
  reply.header('set-cookie', `${DEMO_COOKIE}=${demo.remoteId}; Path=/storefront/demo; HttpOnly; SameSite=Lax`);
  return demo;
}

export function registerPanelRoutes(app: FastifyInstance): void {
  let bundle: Buffer | undefined;
  app.get('/storefront/loyalty.js', { schema: { hide: true } }, async (_request, reply) => {
    bundle ??= fs.existsSync(PANEL_BUNDLE) ? fs.readFileSync(PANEL_BUNDLE) : undefined;
    if (bundle === undefined) throw notFound('file', '/storefront/loyalty.js (run npm run build)');
    return reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*').send(bundle);
  });

  app.get('/storefront/demo', { schema: { hide: true } }, async (request, reply) => {
    const demo = await demoFor(app, request, reply, '/storefront/demo');
    return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(demoPage(demo));
  });

  app.get('/storefront/demo/token', { schema: { hide: true } }, async (request, reply) => {
    const demo = await demoFor(app, request, reply, '/storefront/demo/token');
    const { token } = await signCustomerToken(demo.key, demo.remoteId, app.clock(), DEMO_TOKEN_TTL_SECONDS);
    return reply.header('cache-control', 'no-store').send({ token });
  });
}
