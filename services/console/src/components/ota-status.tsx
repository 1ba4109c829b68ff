import { reasonWords, statusWords } from '../words';

/** The device row: its failure `reason` beside the last OTA status, in words. */
export function OtaStatus({ status, reason }: { status: string; reason: string }) {
  if (!status) return <span className="muted">none yet</span>;
  return (
    <span className={`status status-${status}`}>
      {statusWords(status)}
      {reason && (
        <span className="reason" title={reason}>
          {' '}
          ({reasonWords(reason)})
        </span>
      )}
    </span>
  );
}
