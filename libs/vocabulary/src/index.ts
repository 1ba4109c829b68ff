// The words the API and the services share for where a device stands, defined once: the gateway's
// schemas, rollout's domain and the metrics take them from here, so that adding one is one edit
// the compiler carries everywhere (the console takes them from the OpenAPI document built from them).

/** A device's status in a deployment, in the order of an update (docs/api.md, "Rollout statuses"). */
export const ROLLOUT_STATUSES = ['pending', 'offered', 'download_started', 'downloaded', 'flashed', 'validated', 'reboot', 'confirmed', 'failed', 'rolled_back'] as const;
export type RolloutStatus = (typeof ROLLOUT_STATUSES)[number];

/**
 * Each status's rank: a device's status in a deployment only moves to a higher one, so late,
 * repeated or reordered events never move it backwards (docs/api.md, "Rollout statuses"). Rollout
 * keeps the statuses by it, and registry the device's last status (docs/architecture.md, "A status
 * report, hop by hop"). Typed by the vocabulary, so a new status needs one.
 */
const STATUS_RANK: Record<RolloutStatus, number> = {
  pending: 0,
  offered: 1,
  download_started: 2,
  downloaded: 3,
  flashed: 4,
  validated: 5,
  reboot: 6,
  failed: 7,
  rolled_back: 8,
  confirmed: 9,
};

/** A status's rank (STATUS_RANK); -1 for a word that is no status. */
export function rankOf(status: string): number {
  return STATUS_RANK[status as RolloutStatus] ?? -1;
}

/**
 * What a device may report (docs/api.md, "Status reports"): each status it can reach has the event
 * of the same name (`pending` is where it starts, never a report), and v0.1 devices send `rebooted`
 * for `reboot`.
 */
export const DEVICE_EVENTS = [...ROLLOUT_STATUSES.filter((status) => status !== 'pending'), 'rebooted'] as const;
export type DeviceEvent = Exclude<RolloutStatus, 'pending'> | 'rebooted';

/** The status an event records; undefined for a word that is no event. */
export function statusOfEvent(event: string): RolloutStatus | undefined {
  if (event === 'rebooted') return 'reboot';
  return (DEVICE_EVENTS as readonly string[]).includes(event) ? (event as RolloutStatus) : undefined;
}

/**
 * Why an offer no longer stands, as the offer's standing answers it and a `stopped` report's
 * `reason` says (docs/api.md, "Stopping devices mid-update").
 */
export const STOP_STATUSES = [
  'deployment_paused',
  'deployment_cancelled',
  'deployment_completed',
  'build_archived',
  'device_inactive',
  'device_unknown',
  'not_targeted',
  'not_in_rollout',
] as const;
export type StopStatus = (typeof STOP_STATUSES)[number];

/**
 * What a device reports when it stopped an update because its offer no longer stands: a line of
 * its timeline that moves no status and counts as no failure.
 */
export const STOPPED_EVENT = 'stopped';

/**
 * What a device (or the application on it) reports when it puts off an offer until
 * `deferred_until`: the deployment offers it nothing before then, and the line of its timeline
 * moves no status and counts as no failure (docs/api.md, "Deferral").
 */
export const DEFERRED_EVENT = 'deferred';
/** The longest a device may put an offer off, in seconds (30 days). */
export const MAX_DEFERRAL_SECONDS = 30 * 24 * 3600;

/** What a check answers (docs/api.md, "The check decision"), and an OTA decision record's `status`. */
export const CHECK_STATUSES = [
  'offered',
  'up_to_date',
  'no_compatible_build',
  // A build fits the device's hardware, but its bootloader would refuse every such build: the
  // image's chip-revision range leaves the device's revision out, or its secure_version is below
  // the device's eFuse (docs/api.md, "Compatibility").
  'chip_revision_unsupported',
  'secure_version_too_low',
  'device_inactive',
  'over_limit',
  'not_in_rollout',
  'no_active_deployment',
  'token_required',
] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/** The messages of the check statuses answered before any deployment is looked at. */
export const CHECK_MESSAGES = {
  over_limit: "the owner's plan device cap is reached; the device was not registered",
  device_inactive: 'the device is deactivated',
  token_required: 'this device has its own token: check with it, not with the project token',
} as const satisfies Partial<Record<CheckStatus, string>>;

/** What a preview says a check of one device would answer: check statuses, and two of its own. */
export const PREVIEW_OUTCOMES = [
  'offered',
  'up_to_date',
  'not_in_rollout',
  'no_compatible_build',
  'chip_revision_unsupported',
  'secure_version_too_low',
  'device_inactive',
  'not_targeted',
  'unknown_hardware',
] as const satisfies ReadonlyArray<CheckStatus | 'not_targeted' | 'unknown_hardware'>;
export type PreviewOutcome = (typeof PREVIEW_OUTCOMES)[number];

/**
 * Why a device last reset, as a check's `health.reset_reason` names it: ESP-IDF's
 * `esp_reset_reason()` values, lowercased without their `ESP_RST_` prefix (docs/api.md, "Device
 * health").
 */
export const RESET_REASONS = [
  'unknown',
  'power_on',
  'external',
  'software',
  'panic',
  'int_watchdog',
  'task_watchdog',
  'watchdog',
  'deep_sleep',
  'brownout',
  'sdio',
  'usb',
  'jtag',
  'efuse',
  'power_glitch',
  'cpu_lockup',
] as const;
export type ResetReason = (typeof RESET_REASONS)[number];

/** The resets the health guardrail counts against a build: a crash, a watchdog, a brownout. */
export const ABNORMAL_RESET_REASONS: readonly ResetReason[] = ['panic', 'int_watchdog', 'task_watchdog', 'watchdog', 'brownout', 'cpu_lockup'];
