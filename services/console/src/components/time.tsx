import { useEffect, useState } from 'react';

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
// The person's own time zone and locale: incident work compares these with other local clocks.
const absolute = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** Redraws its caller every `intervalMs`, so that "3 minutes ago" does not freeze between refetches. */
export function useNow(intervalMs = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** Closer than this to now is "now": the server's clock and the browser's differ by a few seconds. */
const NOW_SECONDS = 10;

/** "in 5 minutes", "3 minutes ago", "now" (never "in 2 seconds" for what just happened), as of `now`. */
export function relativeText(at: string, now: number): string {
  const seconds = Math.round((new Date(at).getTime() - now) / 1000);
  if (Math.abs(seconds) < NOW_SECONDS) return relative.format(0, 'second');
  const [unit, size] = UNITS.find(([, unitSeconds]) => Math.abs(seconds) >= unitSeconds) ?? ['second', 1];
  return relative.format(Math.round(seconds / size), unit);
}

export function localTime(at: string): string {
  return absolute.format(new Date(at));
}

/**
 * A moment as a person works with it: the local date and time, with how long ago (kept current)
 * beside it, and the exact UTC time on hover and for assistive technology.
 */
export function Timestamp({ at, never = 'never' }: { at: string | null; never?: string }) {
  const now = useNow();
  if (!at) return <span className="muted">{never}</span>;
  return (
    <time dateTime={at} title={`${at} (UTC)`} className="timestamp">
      {localTime(at)} <span className="muted">· {relativeText(at, now)}</span>
    </time>
  );
}

/** Only the relative hint, for a line that already says the date (a next stage "in 5 minutes"). */
export function RelativeTime({ at }: { at: string }) {
  const now = useNow();
  return (
    <time dateTime={at} title={`${localTime(at)} (${at} UTC)`}>
      {relativeText(at, now)}
    </time>
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
