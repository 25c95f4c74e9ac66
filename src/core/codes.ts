import { randomBytes } from 'node:crypto';

// Codes people type: redemption codes, referral codes.

/** Unambiguous characters: no 0/O, 1/I/L. */
export const CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const CODE_LENGTH = 12;

/** `prefix` and 12 random characters of CODE_ALPHABET, uniformly drawn. */
export function generateCode(prefix: string | null = null): string {
  return generateCodes(1, prefix)[0]!;
}

/**
 * `count` codes as generateCode draws them, from one draw of random bytes for all (a draw per
 * code cost an import of 1,000,000 customers 3 s of CPU for their referral codes).
 */
export function generateCodes(count: number, prefix: string | null = null): string[] {
  const codes: string[] = [];
  // Bytes at or above the largest multiple of the alphabet's size are drawn again (no bias).
  const limit = 256 - (256 % CODE_ALPHABET.length);
  let bytes = randomBytes(count * CODE_LENGTH * 2);
  let next = 0;
  let code = '';
  while (codes.length < count) {
    if (next === bytes.length) [bytes, next] = [randomBytes(CODE_LENGTH * 2), 0];
    const byte = bytes[next++]!;
    if (byte >= limit) continue;
    code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
    if (code.length === CODE_LENGTH) {
      codes.push((prefix ?? '') + code);
      code = '';
    }
  }
  return codes;
}
