// The words people read for the API's values. Records keyed by the API's own types, so that a value
// the API adds is a compile error here until it has words; free-text values (a device's failure
// reason, a check status) fall back to themselves with underscores as spaces.
import type { Device, PreviewOutcome, RolloutStatus } from './types';

export const ROLLOUT_STATUS_WORDS: Record<RolloutStatus, string> = {
  pending: 'not offered yet',
  offered: 'offered',
  download_started: 'downloading',
  downloaded: 'downloaded',
  flashed: 'flashed',
  validated: 'validated',
  reboot: 'rebooting',
  confirmed: 'confirmed',
  failed: 'failed',
  rolled_back: 'rolled back',
};

export const PREVIEW_OUTCOME_WORDS: Record<PreviewOutcome, string> = {
  offered: 'would be offered the build',
  up_to_date: 'already up to date',
  // The check answers not_in_rollout both to a device outside the percentage and to one that
  // rolled this build back (it is not offered it again).
  not_in_rollout: 'outside the percentage, or rolled this build back',
  no_compatible_build: 'hardware the build does not fit',
  chip_revision_unsupported: 'a chip revision the image leaves out',
  secure_version_too_low: 'anti-rollback above the image’s secure version',
  device_inactive: 'deactivated',
  not_targeted: 'outside the targets',
  unknown_hardware: 'hardware never reported',
};

export const CHECK_STATE_WORDS: Record<Device['check_state'], string> = {
  never_seen: 'never checked in',
  waiting_for_next_check: 'an update waits for its next check',
  no_pending_check: 'nothing waiting',
};

/** Reasons the service itself gives, and the ones the device SDK reports; others are shown as sent. */
const REASON_WORDS: Record<string, string> = {
  no_confirmation: 'no confirmation in time (silent after progress)',
  confirm_timeout: 'not confirmed before the device’s own timeout',
  health_check_failed: 'the new build failed its health check',
  boot_failed: 'the new build did not boot',
  checksum_mismatch: 'the download’s checksum did not match',
  signature_invalid: 'the build’s signature did not verify',
};

/** What a check answered (`last_check_status`, a decision's `status`). */
const CHECK_STATUS_WORDS: Record<string, string> = {
  offered: 'offered an update',
  up_to_date: 'up to date',
  no_compatible_build: 'no build fits its hardware',
  chip_revision_unsupported: 'its bootloader would refuse the build: chip revision',
  secure_version_too_low: 'its bootloader would refuse the build: secure version',
  device_inactive: 'deactivated',
  over_limit: 'over the plan’s device limit',
  not_in_rollout: 'outside the rollout percentage',
  no_active_deployment: 'no active deployment',
  token_required: 'needs its own device token',
};

const spaced = (value: string) => value.replaceAll('_', ' ');

export function reasonWords(reason: string | null | undefined): string {
  if (!reason) return '';
  return REASON_WORDS[reason] ?? spaced(reason);
}

export function checkStatusWords(status: string): string {
  return CHECK_STATUS_WORDS[status] ?? spaced(status);
}

export function statusWords(status: string): string {
  return (ROLLOUT_STATUS_WORDS as Record<string, string>)[status] ?? spaced(status);
}

/** A count of devices in words: "1,234", or "about 1,000,000" when it is an estimate. */
export function totalWords(total: { count: number; estimated: boolean }): string {
  return `${total.estimated ? 'about ' : ''}${total.count.toLocaleString('en')}`;
}
