import { randomFillSync } from 'node:crypto';

// A customer's lots version (migration 023): set anew wherever the customer's lots change, so
// that what was read off them can be kept beside the version it was read at (the storefront's
// upcoming expiries, storefront/expiries.ts). 53 random bits, never 0: two states of one
// customer's lots meet under one version with a chance of 2^-53.

const pool = new Uint32Array(512);
let next = pool.length;

export function newLotsVersion(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  const high = pool[next++]! & 0x1fffff;
  const low = pool[next++]!;
  return high * 0x100000000 + low || 1;
}
