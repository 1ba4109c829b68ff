import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const RAW_TOKEN = /^ota_(pat|prj|dev)_[A-Za-z0-9_-]{20,}$/;

/**
 * Remembers every raw token the tests were given (one per line), so that the end of the run can
 * look for them in every log the stack wrote.
 */
export function recordIssuedTokens(file: string | undefined, body: unknown): void {
  if (!file) return;
  const found: string[] = [];
  const visit = (value: unknown, depth: number) => {
    if (depth > 3 || !value || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'token' && typeof inner === 'string' && RAW_TOKEN.test(inner)) found.push(inner);
      else visit(inner, depth + 1);
    }
  };
  visit(body, 0);
  if (found.length > 0) appendFileSync(file, found.map((token) => `${token}\n`).join(''));
}

export interface TokenSighting {
  file: string;
  line: number;
  /** Only the token's public prefix: a report must not leak what it found. */
  prefix: string;
}

/** Every line of every file in `logDir` that contains one of the raw tokens in `tokensFile`. */
export function findTokensInLogs(tokensFile: string, logDir: string): { tokens: number; files: number; sightings: TokenSighting[] } {
  const tokens = existsSync(tokensFile) ? [...new Set(readFileSync(tokensFile, 'utf8').split('\n').filter(Boolean))] : [];
  const files = existsSync(logDir) ? readdirSync(logDir).filter((name) => name.endsWith('.log')) : [];
  const sightings: TokenSighting[] = [];
  for (const name of files) {
    const lines = readFileSync(join(logDir, name), 'utf8').split('\n');
    lines.forEach((text, index) => {
      for (const token of tokens) {
        // The random part alone would leak the token too, so search for that.
        if (text.includes(token.slice(8))) sightings.push({ file: name, line: index + 1, prefix: token.slice(0, 12) });
      }
    });
  }
  return { tokens: tokens.length, files: files.length, sightings };
}
