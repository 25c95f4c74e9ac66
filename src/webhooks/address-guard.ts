import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { nonPublicKind, type AddressKind } from '../core/addresses.js';

// The guard against server-side request forgery: webhook deliveries go only to public
// addresses. It runs at delivery time, on the addresses the socket then connects to (DNS can
// change after a webhook is created, and a second lookup could be rebound), so it works as the
// `lookup` of the connection itself. Which addresses are public: core/addresses.ts.

export { ipLiteralOf, literalHostKind, nonPublicKind, type AddressKind } from '../core/addresses.js';

/** A delivery refused because its host is, or resolves to, a non-public address. */
export class NonPublicAddressError extends Error {
  override readonly name = 'NonPublicAddressError';
  constructor(
    readonly address: string,
    readonly kind: AddressKind,
    readonly hostname: string | null = null,
  ) {
    super(`address ${address}${hostname === null ? '' : ` (of ${hostname})`} is ${kind}; deliveries go only to public addresses`);
  }
}

/** Throws NonPublicAddressError unless `address` is public. */
export function assertPublicAddress(address: string, hostname: string | null = null): void {
  const kind = nonPublicKind(address);
  if (kind !== null) throw new NonPublicAddressError(address, kind, hostname);
}

/**
 * A `lookup` for net.connect / tls.connect that resolves as dns.lookup does and refuses the
 * name when any of its addresses is not public; the socket connects to the addresses checked
 * here, never to those of another lookup. (Sockets skip `lookup` for IP literals: check those
 * with assertPublicAddress first.)
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return (callback as (err: Error) => void)(err);
    for (const { address } of addresses) {
      const kind = nonPublicKind(address);
      if (kind !== null) return (callback as (err: Error) => void)(new NonPublicAddressError(address, kind, hostname));
    }
    if (addresses.length === 0) return (callback as (err: Error) => void)(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};
