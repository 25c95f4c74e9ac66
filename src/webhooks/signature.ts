import { createHmac, timingSafeEqual } from 'node:crypto';

// Deliveries are signed as Stripe signs its webhooks, so the same verification code works:
//   Loyalty-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>", keyed by the secret>
// The timestamp is signed too, so a captured delivery cannot be replayed later.

export const SIGNATURE_HEADER = 'loyalty-signature';

/** Receivers should refuse signatures older than this. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function computeSignature(secret: string, timestamp: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** The Loyalty-Signature header of `body` sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${computeSignature(secret, timestamp, body)}`;
}

/**
 * What a receiver does: true when the header carries a v1 signature of this exact body made
 * with `secret`, at most `toleranceSeconds` from `nowSeconds`.
 */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number, toleranceSeconds = DEFAULT_TOLERANCE_SECONDS): boolean {
  const parts = header.split(',').map((part) => part.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(computeSignature(secret, t, body), 'hex');
  return parts.some(([k, v]) => {
    if (k !== 'v1' || v === undefined || !/^[0-9a-f]{64}$/.test(v)) return false;
    return timingSafeEqual(Buffer.from(v, 'hex'), expected);
  });
}
