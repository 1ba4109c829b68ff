import type { Downloads } from '../types';
import { formatBytes } from './time';

/**
 * How a deployment's or a build's images reached the devices (docs/api.md, "Delta patches"): a bar
 * of patched, whole and fell-back downloads, and the bytes the patches saved.
 */
export function DownloadsLine({ downloads, testId }: { downloads: Downloads; testId: string }) {
  const total = downloads.patched + downloads.whole + downloads.fell_back;
  if (total === 0) return <p className="muted" data-testid={testId}>No downloads reported yet.</p>;
  const parts = [
    { key: 'patched', count: downloads.patched, words: 'as a delta patch' },
    { key: 'whole', count: downloads.whole, words: 'whole' },
    { key: 'fell-back', count: downloads.fell_back, words: 'whole after a patch failed' },
  ].filter((part) => part.count > 0);
  const wholeBytes = downloads.patched * downloads.build_bytes;
  return (
    <div data-testid={testId}>
      <div className="downloads-bar" role="img" aria-label={parts.map((part) => `${part.count} ${part.words}`).join(', ')}>
        {parts.map((part) => (
          <span key={part.key} className={`downloads-${part.key}`} style={{ flexGrow: part.count }} />
        ))}
      </div>
      <p>
        {parts.map((part, index) => (
          <span key={part.key}>
            {index > 0 && ' · '}
            <span className={`swatch downloads-${part.key}`} aria-hidden="true" /> <strong>{part.count}</strong> {part.words}
          </span>
        ))}
        {downloads.patched > 0 && (
          <>
            {' '}
            · deltas saved <strong data-testid={`${testId}-saved`}>{formatBytes(downloads.bytes_saved)}</strong>{' '}
            <span className="muted">({Math.round((100 * downloads.bytes_saved) / wholeBytes)}% of what the patched devices would have downloaded)</span>
          </>
        )}
      </p>
    </div>
  );
}
