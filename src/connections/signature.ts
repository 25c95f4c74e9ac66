import { createHmac, timingSafeEqual } from 'node:crypto';

// Shopify (X-Shopify-Hmac-Sha256) and WooCommerce (X-WC-Webhook-Signature) sign a delivery the
// same way: base64(HMAC-SHA256(secret, raw body bytes)). Checked over the bytes as received,
// before anything is parsed, in constant time.

export function signatureOf(secret: string, raw: Buffer): string {
  return createHmac('sha256', secret).update(raw).digest('base64');
}

export function validSignature(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  const given = Buffer.from(header.trim(), 'base64');
  // A length that differs says nothing of the secret: the expected length is public.
  return given.length === expected.length && timingSafeEqual(given, expected);
}
