/** What otactl's exit status tells a pipeline (documented in `otactl --help` and docs/ci.md). */
export const EXIT = {
  /** The command did what it was asked; `wait`: the condition was met. */
  ok: 0,
  /** Anything else: a usage mistake, the service unreachable, a deployment cancelled or completed before the condition. */
  other: 1,
  /** The deployment is paused, by a guardrail or a person: the reason, the figures and the console link are printed. */
  paused: 2,
  /** `--timeout` passed before the condition was met. */
  timedOut: 3,
  /** The API refused the release (or the command) before anything started: its `detail` is printed. */
  refused: 4,
} as const;
