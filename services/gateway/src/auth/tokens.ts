import { hash, randomBytes } from 'node:crypto';

export type TokenKind = 'personal' | 'project' | 'device';

// A marker of the token's kind leads every raw token, so a leaked one can be recognized (and
// secret scanners can be taught the pattern).
const MARKER: Record<TokenKind, string> = { personal: 'ota_pat_', project: 'ota_prj_', device: 'ota_dev_' };

/** The number of characters of a raw token kept for display and audit. */
export const PREFIX_LENGTH = 12;

export function newRawToken(kind: TokenKind): string {
  return MARKER[kind] + randomBytes(32).toString('base64url');
}

/** Tokens are stored and looked up only by this hash. */
export function hashToken(raw: string): string {
  return hash('sha256', raw, 'hex');
}

export function prefixOf(raw: string): string {
  return raw.slice(0, PREFIX_LENGTH);
}

/** When a new personal token expires by default: `days` from now; null for 0 (no default expiry). */
export function personalTokenExpiry(days: number, now = new Date()): Date | null {
  return days > 0 ? new Date(now.getTime() + days * 86_400_000) : null;
}

/** A console session id or CSRF token: 32 random bytes, carrying no marker (it is no API token). */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}
