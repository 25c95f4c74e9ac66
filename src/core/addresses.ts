import { isIP, BlockList } from 'node:net';
import type { ErrorDetail } from '../errors.js';

// Which addresses are not public, by their spelling alone: the ranges of the IANA
// special-purpose registries. Webhook urls are checked with it when written (publicUrlErrors),
// and every delivery checks the addresses it connects to (webhooks/address-guard.ts).

export type AddressKind = 'private' | 'loopback' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

type Family = 'ipv4' | 'ipv6';

function ranges(family: Family, entries: readonly (readonly [string, number, AddressKind])[]) {
  return entries.map(([network, prefix, kind]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { list, kind };
  });
}

const IPV4 = ranges('ipv4', [
  ['0.0.0.0', 8, 'unspecified'], // "this network"
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'], // carrier-grade NAT
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // cloud metadata lives here
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // and the broadcast address
]);

/** IPv4-mapped IPv6 (::ffff:a.b.c.d): classified by the IPv4 address inside. */
const MAPPED = ranges('ipv6', [['::ffff:0:0', 96, 'reserved']])[0]!.list;

const IPV6 = ranges('ipv6', [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'], // unique local
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // site-local (deprecated)
  ['ff00::', 8, 'multicast'],
  ['2001:db8::', 32, 'reserved'], // documentation
  ['2001::', 23, 'reserved'], // IETF protocol assignments, Teredo among them
  ['2002::', 16, 'reserved'], // 6to4, which embeds any IPv4 address
]);

/** Global unicast: an IPv6 address outside it (NAT64, IPv4-compatible, discard...) is reserved. */
const GLOBAL_UNICAST = ranges('ipv6', [['2000::', 3, 'reserved']])[0]!.list;

/**
 * Why `address` (an IP literal, without brackets) is not a public address, or null when it is
 * one. Anything that is not an IP address at all counts as reserved.
 */
export function nonPublicKind(address: string): AddressKind | null {
  const version = isIP(address);
  if (version === 4) return IPV4.find((r) => r.list.check(address, 'ipv4'))?.kind ?? null;
  if (version !== 6) return 'reserved';
  // BlockList matches IPv4 rules against IPv4-mapped IPv6 addresses.
  if (MAPPED.check(address, 'ipv6')) return IPV4.find((r) => r.list.check(address, 'ipv6'))?.kind ?? null;
  const kind = IPV6.find((r) => r.list.check(address, 'ipv6'))?.kind;
  if (kind !== undefined) return kind;
  return GLOBAL_UNICAST.check(address, 'ipv6') ? null : 'reserved';
}

/** The IP literal of a URL's hostname (IPv6 without its brackets), or null for a name. */
export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}

/**
 * Why a URL's hostname is not public when that shows without DNS: an IP literal (any form the
 * URL parser reads as one: `2130706433` is 127.0.0.1) outside the public ranges, or `localhost`
 * and its subdomains, which always mean loopback (RFC 6761). Null for any other name: what a
 * name resolves to can change, so names are guarded at each delivery.
 */
export function literalHostKind(hostname: string): AddressKind | null {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'loopback';
  const literal = ipLiteralOf(hostname);
  return literal === null ? null : nonPublicKind(literal);
}

/** The url's errors when its host is, by its spelling alone, not a public address. */
export function publicUrlErrors(url: string, param = 'url'): ErrorDetail[] {
  let hostname: string;
  try {
    // The same parser as the delivery's: `http://2130706433/` is 127.0.0.1 to both.
    hostname = new URL(url).hostname;
  } catch {
    return [{ param, code: 'invalid_format', message: `${param} must be a valid uri` }];
  }
  const kind = literalHostKind(hostname);
  if (kind === null) return [];
  return [{ param, code: 'url_not_public', message: `${param} must point at a public address; ${hostname} is ${kind}` }];
}
