import { useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError } from '../api';

/** An error as the API worded it (its `detail`), in a live region so screen readers hear it. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  const status = error instanceof ApiError && error.status ? ` (${error.status})` : '';
  return (
    <p className="error" role="alert">
      {text}
      {status}
    </p>
  );
}

/** What a list shows while it loads, when it failed, or when it is empty; never a blank area. */
export function LoadState({ loading, error, empty, children }: { loading: boolean; error: unknown; empty?: string | false; children: ReactNode }) {
  if (error) return <ErrorNote error={error} />;
  if (loading) return <p className="muted" role="status">Loading…</p>;
  if (empty) return <p className="muted">{empty}</p>;
  return <>{children}</>;
}

/** A button that says it is working while its action runs. */
export function BusyButton({ busy, children, busyText = 'Working…', onClick, ...rest }: React.ButtonHTMLAttributes<HTMLButtonElement> & { busy: boolean; busyText?: string }) {
  // The second click of a double-click does nothing: it would land on whatever the first one put
  // in the button's place (Resume where Pause was), or create a second project, draft or token.
  // A click from the keyboard has detail 0 and always counts.
  const once = (event: React.MouseEvent<HTMLButtonElement>) => {
    if (event.detail > 1) {
      event.preventDefault();
      return;
    }
    onClick?.(event);
  };
  return (
    <button {...rest} onClick={once} disabled={busy || rest.disabled} aria-busy={busy}>
      {busy ? busyText : children}
    </button>
  );
}

/**
 * A confirmation in a native modal dialog: it traps focus, closes on Escape, and returns focus
 * to where it was. `onConfirm` runs on the confirm button; the dialog stays open (with the API's
 * detail) if it fails. The button that closes it says "Go back", never a word that could also be
 * an action of the page behind it ("Cancel" a deployment). With `typeToConfirm`, the confirm
 * button waits until that text is typed: for what cannot be undone and hurts many devices.
 * With `acknowledge`, it waits for that box to be ticked: a second explicit step.
 */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  danger,
  typeToConfirm,
  acknowledge,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  typeToConfirm?: string;
  acknowledge?: string;
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [typed, setTyped] = useState('');
  const [acknowledged, setAcknowledged] = useState(false);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      setError(null);
      setTyped('');
      setAcknowledged(false);
      dialog.showModal();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);
  const ready = (typeToConfirm === undefined || typed.trim() === typeToConfirm) && (acknowledge === undefined || acknowledged);
  const confirm = async () => {
    if (!ready) return;
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog ref={ref} onClose={onClose} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      <div>{children}</div>
      {open && typeToConfirm !== undefined && (
        <label className="type-to-confirm">
          <span>
            Type <strong className="hash">{typeToConfirm}</strong> to confirm
          </span>
          <input
            value={typed}
            autoComplete="off"
            spellCheck={false}
            onChange={(event) => setTyped(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter') void confirm();
            }}
          />
        </label>
      )}
      {open && acknowledge !== undefined && (
        <label className="check">
          <input type="checkbox" checked={acknowledged} onChange={(event) => setAcknowledged(event.target.checked)} /> {acknowledge}
        </label>
      )}
      <ErrorNote error={error} />
      <div className="actions">
        <button type="button" onClick={onClose} autoFocus>
          Go back
        </button>
        <BusyButton type="button" className={danger ? 'danger-solid' : 'primary'} busy={busy} disabled={!ready} onClick={() => void confirm()}>
          {confirmLabel}
        </BusyButton>
      </div>
    </dialog>
  );
}

/**
 * Shown above data that a refresh failed to replace: the last good answer stays on the page,
 * marked with its age, and the API's detail says why it is not newer.
 */
export function StaleNote({ error, updatedAt }: { error: unknown; updatedAt: number }) {
  if (!error || !updatedAt) return null;
  const text = error instanceof Error ? error.message : String(error);
  return (
    <p className="stale" role="status" data-testid="stale">
      Not current: the last refresh failed ({text}). Showing what was read at {new Date(updatedAt).toLocaleTimeString()}.
    </p>
  );
}

/** A secret shown once (a raw token), with a copy button. */
export function ShownOnce({ label, secret, onDismiss }: { label: string; secret: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="shown-once" role="status">
      <p>
        <strong>{label}</strong> It is shown this once: copy it now.
      </p>
      <code data-testid="raw-token">{secret}</code>
      <div className="actions">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(secret).catch(() => undefined);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDismiss}>
          Done
        </button>
      </div>
    </div>
  );
}
