import { createHash, randomBytes } from 'node:crypto';

// API tokens: `lty_` and 43 characters of base64url (256 random bits). Only the SHA-256 of a
// token is stored; the hint (its last four characters) lets a merchant tell tokens apart.

export const TOKEN_PREFIX = 'lty_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function tokenHint(token: string): string {
  return `${TOKEN_PREFIX}…${token.slice(-4)}`;
}
