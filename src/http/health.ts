import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.js';

const Status = Type.Object({ status: Type.String({ examples: ['ok'] }) });

/** Liveness (the process answers) and readiness (the database answers). */
export function registerHealth(app: FastifyInstance): void {
  app.get('/healthz', { schema: { tags: ['Operations'], summary: 'Liveness probe', security: [], response: { 200: Status } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { tags: ['Operations'], summary: 'Readiness probe: the database answers', security: [], response: { 200: Status } } }, async () => {
    try {
      await app.database.ping();
    } catch {
      throw new AppError('unavailable', 'The database is not reachable', { headers: { 'retry-after': '5' } });
    }
    return { status: 'ok' };
  });
}
