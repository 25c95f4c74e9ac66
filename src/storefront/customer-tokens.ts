import { randomBytes, type webcrypto } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { parseRemoteId } from '../core/ids.js';
import { AppError } from '../errors.js';
import { hmacKey } from './keys.js';

// Customer tokens (docs/storefront.md): HS256 JWTs that the merchant's backend signs with a
// storefront key's secret, `kid` the key's publishable key, `sub` the customer's remote_id.
// Verification is jose's; this module only says which key and which rules. Every refusal is
// the same AppError, thrown after the same work: the signature is checked (against a key no
// one holds, when the kid is unknown) before any claim, so neither the message nor the time
// tells which check failed.

export const ALGORITHM = 'HS256';
/** Clock skew allowed on exp, nbf and iat, both ways. */
export const CLOCK_SKEW_SECONDS = 60;
/** The longest lifetime (exp − iat) a token may have. */
export const MAX_LIFETIME_SECONDS = 24 * 3600;

/** The one answer to every refused customer token or publishable key. */
export const refused = () => new AppError('unauthorized', 'The customer token or publishable key is missing, invalid, expired or revoked');

/** A verified token's customer and key. */
export interface CustomerClaims {
  remoteId: number;
  /** When the token was issued, in ms. */
  issuedAt: number;
}

/** Signs nothing valid: stands in for the secret of an unknown kid, so the work is the same. */
const NOBODYS_SECRET = hmacKey(randomBytes(32));

/** What a token that passed every check says, and the claims that decide when it passes again. */
interface Verified {
  kid: string;
  claims: CustomerClaims;
  iat: number;
  nbf: number | undefined;
  exp: number;
}

/**
 * Tokens that passed verification lately, keyed by the token as sent (its signature included),
 * so that a shopper's next requests with it cost no signature: a kid's secret never changes (a
 * key is revoked, never re-keyed), so only the key's liveness and the time checks can turn
 * the answer. Bounded in count and in the tokens' length; cleared when full.
 */
const verified = new Map<string, Verified>();
const VERIFIED_MAX = 5000;
const VERIFIED_MAX_LENGTH = 1024;

/**
 * Whether a token that passed once passes at `now`: jose's time checks (nbf past, exp not, with
 * the skew, on whole seconds as jose counts them) and this module's (iat not in the future).
 */
function passesAt(token: Verified, now: number): boolean {
  const seconds = Math.floor(now / 1000);
  if (token.nbf !== undefined && token.nbf > seconds + CLOCK_SKEW_SECONDS) return false;
  if (token.exp <= seconds - CLOCK_SKEW_SECONDS) return false;
  return token.iat <= now / 1000 + CLOCK_SKEW_SECONDS;
}

/**
 * What a token verified lately says, when it passes the time checks at `now`; the caller must
 * still find its kid a live key. Undefined: verify it (verifyCustomerToken).
 */
export function keptVerdict(token: string, now: number): { kid: string; claims: CustomerClaims } | undefined {
  const known = verified.get(token);
  return known !== undefined && passesAt(known, now) ? known : undefined;
}

/**
 * Verifies a customer token; `secretOf` finds the secret of a live key by its publishable key.
 * Refused (401, one message) for any alg but HS256, a bad signature, an unknown kid, exp missing
 * or past, nbf in the future, iat missing or in the future, a lifetime over 24 hours, a sub
 * that is not a remote_id. The customer's existence is the caller's to check.
 */
export async function verifyCustomerToken(
  token: string,
  secretOf: (kid: string) => Promise<webcrypto.CryptoKey | undefined>,
  now: number,
): Promise<{ kid: string; claims: CustomerClaims }> {
  // A token seen lately whose key is found lately never comes here (keptVerdict, storefront/auth.ts).
  const result = await verifyInFull(token, secretOf, now);
  if (token.length <= VERIFIED_MAX_LENGTH) {
    if (verified.size >= VERIFIED_MAX) verified.clear();
    verified.set(token, result);
  }
  return result;
}

async function verifyInFull(token: string, secretOf: (kid: string) => Promise<webcrypto.CryptoKey | undefined>, now: number): Promise<Verified> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    throw refused();
  }
  const nobodys = await NOBODYS_SECRET;
  const secret = (typeof kid === 'string' && kid.length <= 64 ? await secretOf(kid) : undefined) ?? nobodys;
  let payload;
  try {
    ({ payload } = await jwtVerify(token, secret, {
      algorithms: [ALGORITHM],
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ['exp', 'iat', 'sub'],
      currentDate: new Date(now),
    }));
  } catch {
    throw refused();
  }
  if (secret === nobodys) throw refused();
  const { exp, iat, nbf, sub } = payload as { exp: number; iat: number; nbf?: number; sub: unknown };
  if (iat > now / 1000 + CLOCK_SKEW_SECONDS || exp - iat > MAX_LIFETIME_SECONDS) throw refused();
  const remoteId = typeof sub === 'string' ? parseRemoteId(sub) : null;
  if (remoteId === null) throw refused();
  // Shared by the requests that come with the same token: frozen so that none can change it.
  return Object.freeze({ kid: kid as string, claims: Object.freeze({ remoteId, issuedAt: iat * 1000 }), iat, nbf, exp });
}

/** Signs a customer token as a merchant's backend would (POST …/storefront_tokens, the demo page). */
export async function signCustomerToken(
  key: { publishable_key: string; secret: string },
  remoteId: number,
  now: number,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: number }> {
  const iat = Math.floor(now / 1000);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT', kid: key.publishable_key })
    .setSubject(String(remoteId))
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(new TextEncoder().encode(key.secret));
  return { token, expiresAt: (iat + ttlSeconds) * 1000 };
}
