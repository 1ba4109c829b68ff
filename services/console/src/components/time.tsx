const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
];
const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 minutes ago", with the exact UTC time on hover and for assistive technology. */
export function RelativeTime({ at, never = 'never' }: { at: string | null; never?: string }) {
  if (!at) return <span className="muted">{never}</span>;
  const seconds = Math.round((new Date(at).getTime() - Date.now()) / 1000);
  const [unit, size] = UNITS.find(([, unitSeconds]) => Math.abs(seconds) >= unitSeconds) ?? ['second', 1];
  return (
    <time dateTime={at} title={at}>
      {relative.format(Math.round(seconds / size), unit)}
    </time>
  );
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
