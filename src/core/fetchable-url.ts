import type { ErrorDetail } from '../errors.js';

// A url that fetch would refuse at every delivery is refused when it is written instead.

/**
 * The Fetch standard's "bad port" list (https://fetch.spec.whatwg.org/#port-blocking): fetch,
 * undici's included, fails any request to one of these ports with "bad port". undici keeps its
 * copy in an internal module that its package does not export, so it is repeated here.
 */
export const BAD_PORTS: ReadonlySet<string> = new Set([
  '1',
  '7',
  '9',
  '11',
  '13',
  '15',
  '17',
  '19',
  '20',
  '21',
  '22',
  '23',
  '25',
  '37',
  '42',
  '43',
  '53',
  '69',
  '77',
  '79',
  '87',
  '95',
  '101',
  '102',
  '103',
  '104',
  '109',
  '110',
  '111',
  '113',
  '115',
  '117',
  '119',
  '123',
  '135',
  '137',
  '139',
  '143',
  '161',
  '179',
  '389',
  '427',
  '465',
  '512',
  '513',
  '514',
  '515',
  '526',
  '530',
  '531',
  '532',
  '540',
  '548',
  '554',
  '556',
  '563',
  '587',
  '601',
  '636',
  '989',
  '990',
  '993',
  '995',
  '1719',
  '1720',
  '1723',
  '2049',
  '3659',
  '4045',
  '4190',
  '5060',
  '5061',
  '6000',
  '6566',
  '6665',
  '6666',
  '6667',
  '6668',
  '6669',
  '6679',
  '6697',
  '10080',
]);

/**
 * Why fetch could not, or should not, deliver to an http(s) `url`: no host after `//` (the URL
 * parser would read `http:///x` as the host `x`), credentials in it (they would be sent with
 * every delivery, and shown to whoever reads the webhook), or a port on the bad-port list.
 */
export function fetchableUrlErrors(url: string, param = 'url'): ErrorDetail[] {
  // The authority as written: what follows the scheme's `//`, up to the path, query or fragment
  // (a backslash ends it too, as the URL parser reads one as a slash in http urls).
  const authority = /^[a-z]+:\/\/([^/\\?#]*)/i.exec(url)?.[1];
  if (authority === undefined || authority === '') return [{ param, code: 'invalid_format', message: `${param} must name a host after //` }];
  if (authority.includes('@')) return [{ param, code: 'url_has_credentials', message: `${param} must not hold a user name or password` }];
  let port: string;
  try {
    port = new URL(url).port;
  } catch {
    return [{ param, code: 'invalid_format', message: `${param} must be a valid uri` }];
  }
  if (BAD_PORTS.has(port))
    return [{ param, code: 'port_not_allowed', message: `${param} must not use port ${port}, which fetch refuses (the Fetch standard's bad ports)` }];
  return [];
}
