import type { FastifyInstance } from 'fastify';
import { registerEarnRoutes } from './earn-routes.js';
import { registerMeRoutes } from './me-routes.js';
import { registerProgrammeRoute } from './programme.js';
import { registerStorefrontScope } from './scope.js';
import { registerSpendRoutes } from './spend-routes.js';

/** The storefront API (docs/storefront.md), registered under /storefront_api/v1. */
export function registerStorefrontRoutes(app: FastifyInstance): void {
  registerStorefrontScope(app);
  registerProgrammeRoute(app);
  registerMeRoutes(app);
  registerSpendRoutes(app);
  registerEarnRoutes(app);
}
