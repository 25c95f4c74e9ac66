import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

// The merchant console (console/, console/README.md): static files that `npm run build`
// writes to dist/console. It talks to the API like any integration does, so nothing here
// knows a token or a shop.

export const CONSOLE_PREFIX = '/console';

/** The project's root: the nearest folder above this module with a package.json (from src/ and dist/src/ alike). */
function projectRoot(from: string): string {
  let dir = from;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

export const CONSOLE_DIR = path.join(projectRoot(import.meta.dirname), 'dist', 'console');

// The page holds an API token: nothing but its own files may run in it, and no other site may frame it.
const POLICY = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export async function registerConsoleRoutes(app: FastifyInstance, dir: string = CONSOLE_DIR): Promise<void> {
  if (!fs.existsSync(path.join(dir, 'index.html'))) {
    app.log.warn({ dir }, 'the console is not built (npm run build builds it); /console answers 404');
    const notBuilt = async () => {
      throw new AppError('not_found', 'The console is not built on this server: run `npm run build`');
    };
    app.get(CONSOLE_PREFIX, { schema: { hide: true } }, notBuilt);
    app.get(`${CONSOLE_PREFIX}/*`, { schema: { hide: true } }, notBuilt);
    return;
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: `${CONSOLE_PREFIX}/`,
    // The page itself is served by the route below: the router ignores trailing slashes, so
    // /console and /console/ are one route, and the page's asset URLs are absolute.
    index: false,
    cacheControl: false,
    setHeaders: (res, file) => {
      res.setHeader('content-security-policy', POLICY);
      res.setHeader('referrer-policy', 'no-referrer');
      res.setHeader('x-content-type-options', 'nosniff');
      // The file names under assets/ carry their content's hash; the page must be asked for again.
      res.setHeader('cache-control', file.includes(`${path.sep}assets${path.sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.get(CONSOLE_PREFIX, { schema: { hide: true } }, (_request, reply) => reply.sendFile('index.html'));
}
