/**
 * What a download answers to its `Range` and `If-Range` headers (RFC 9110 section 14), for a
 * binary of `size` bytes whose strong entity tag is `etag`. The resume contract is in
 * docs/api.md ("Resuming a download").
 *
 * - No `Range`, one we do not serve (several ranges, another unit, a malformed header), or an
 *   `If-Range` that does not name this exact build: the whole binary (200). RFC 9110 lets a
 *   server ignore a Range it does not serve, and a client that resumes must then start over.
 * - `bytes=N-`, `bytes=N-M` or `bytes=-N` that overlaps the binary: those bytes (206).
 * - A range that starts past the end: 416, with `Content-Range: bytes *\/size`.
 */
export type RangeAnswer =
  | { kind: 'whole' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const SINGLE_RANGE = /^bytes=(\d{0,15})-(\d{0,15})$/;

export function answerRange(rangeHeader: string | undefined, ifRange: string | undefined, size: number, etag: string | undefined): RangeAnswer {
  if (rangeHeader === undefined) return { kind: 'whole' };
  // If-Range with a date, or with a tag of another build, asks for the whole binary. We send no
  // Last-Modified, so a date can never be proven current; an unknown tag (an old URL) never matches.
  if (ifRange !== undefined && (etag === undefined || ifRange.trim() !== etag)) return { kind: 'whole' };
  const match = SINGLE_RANGE.exec(rangeHeader.replace(/\s+/g, ''));
  if (!match) return { kind: 'whole' };
  const [, first = '', last = ''] = match;
  if (first === '' && last === '') return { kind: 'whole' };
  if (first === '') {
    // A suffix range: the last N bytes.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  // bytes=20-10 is not a range at all (RFC 9110 14.1.1): ignored, like any malformed header.
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}

/** The strong entity tag of a build: its SHA-256, which names its bytes exactly. */
export function etagOf(sha256: string): string {
  return `"${sha256}"`;
}
