import { randomBytes } from 'node:crypto';

// Codes people type: redemption codes, referral codes.

/** Unambiguous characters: no 0/O, 1/I/L. */
export const CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const CODE_LENGTH = 12;

/** `prefix` and 12 random characters of CODE_ALPHABET, uniformly drawn. */
export function generateCode(prefix: string | null = null): string {
  let code = '';
  // Bytes at or above the largest multiple of the alphabet's size are drawn again (no bias).
  const limit = 256 - (256 % CODE_ALPHABET.length);
  while (code.length < CODE_LENGTH) {
    for (const byte of randomBytes(CODE_LENGTH * 2)) {
      if (byte >= limit) continue;
      code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
      if (code.length === CODE_LENGTH) break;
    }
  }
  return (prefix ?? '') + code;
}
