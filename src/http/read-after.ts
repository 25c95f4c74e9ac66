import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parsePosition, type Replicas } from '../db/replicas.js';
import type { DB } from '../db/tables.js';

// Read-your-writes with read replicas (DESIGN 18, docs/scaling.md). Every write's answer carries
// Loyalty-Read-After: the primary's WAL position once the write committed. A read that sends it
// back is served by a replica that has replayed past it, or after a bounded wait, or by the
// primary (db/replicas.ts). The process also remembers its own last write per shop, so a client
// of one process reads its writes without the header. Without replicas none of this runs.

export const READ_AFTER_HEADER = 'loyalty-read-after';

/** Shops whose last write a process remembers at most; the least recently written go first. */
const REMEMBERED_SHOPS = 100_000;

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Each shop's last write in this process, as a position in the primary's WAL. */
const lastWrites = new WeakMap<Replicas, Map<number, bigint>>();

function remember(replicas: Replicas, shopId: number, position: bigint): void {
  let shops = lastWrites.get(replicas);
  if (shops === undefined) lastWrites.set(replicas, (shops = new Map()));
  const known = shops.get(shopId);
  shops.delete(shopId);
  shops.set(shopId, known !== undefined && known > position ? known : position);
  if (shops.size > REMEMBERED_SHOPS) shops.delete(shops.keys().next().value!);
}

/**
 * The replica a read request may use, or null for the primary: past the position its
 * Loyalty-Read-After names and this process's last write of its shop, whichever is later. A
 * header that is no position this server gave reads the primary, which holds every write.
 */
export function replicaFor(replicas: Replicas, request: FastifyRequest): Promise<DB | null> {
  const header = request.headers[READ_AFTER_HEADER];
  let after: bigint | null = null;
  if (header !== undefined) {
    after = parsePosition(Array.isArray(header) ? header.at(-1) : header);
    if (after === null) return Promise.resolve(null);
  }
  const shopId = (request.shop as { id?: number } | null)?.id;
  const own = shopId === undefined ? undefined : lastWrites.get(replicas)?.get(shopId);
  if (own !== undefined && (after === null || own > after)) after = own;
  return replicas.reader(after);
}

/** Sets Loyalty-Read-After on the answer of every write, and remembers it for the shop. */
export function registerReadAfter(app: FastifyInstance): void {
  const replicas = app.database.replicas;
  if (replicas === null) return;
  app.addHook('onSend', async (request, reply, payload) => {
    // Only a success wrote anything (errors never half-write): a flood of refused requests costs
    // the primary nothing more. Reads and preflights write nothing.
    if (READS.has(request.method) || request.routeOptions.config?.readOnly === true || reply.statusCode >= 300) return payload;
    try {
      const position = await replicas.position();
      reply.header(READ_AFTER_HEADER, position);
      const shopId = (request.shop as { id?: number } | null)?.id;
      if (shopId !== undefined) remember(replicas, shopId, parsePosition(position)!);
    } catch (error) {
      // The primary that just answered no longer does: the client reads the primary without it.
      request.log.warn({ err: error }, 'the WAL position for Loyalty-Read-After could not be read');
    }
    return payload;
  });
}
