import { boundedLabel, sharedRead, type ServiceMetrics } from '@ota/metrics';
import type { Deployment } from '../domain/model';
import type { StatusCounts } from '../domain/status-counts';
import { downloadOf } from '../domain/downloads';

/**
 * Failure reasons the service gives and the device SDK reports (docs/device-integration.md,
 * "Reporting"): the values the metrics keep as labels. A device may send any reason; the others
 * are counted as `other`, so that no label grows with what a fleet sends.
 */
export const METRIC_FAILURE_REASONS: ReadonlySet<string> = new Set([
  'signature_invalid',
  'checksum_mismatch',
  'download_failed',
  'flash_write_failed',
  'confirm_timeout',
  'boot_failed',
  'health_check_failed',
  'no_confirmation',
]);

/** Why a device gave up a delta patch for the full image, as the device SDK reports it (device-sdk/README.md, "Delta updates"). */
export const METRIC_DELTA_FAILURES: ReadonlySet<string> = new Set(['patch_refused', 'patch_incomplete', 'size_mismatch', 'checksum_mismatch', 'patch_unavailable', 'patch_withdrawn']);

export interface DeploymentFigures {
  /** Deployments a person watches: active and paused ones. */
  liveDeployments(): Promise<Deployment[]>;
  countsOf(deploymentId: string): Promise<StatusCounts>;
}

/** Scrapes closer together than this share one read of the store. */
const FIGURES_MAX_AGE_MS = 10_000;

/**
 * Rollout's metrics (docs/operations.md, "Metrics"): status reports and guardrail trips as they
 * happen, and, read when Prometheus scrapes, the state and device counts of each active or paused
 * deployment. Those gauges carry a deployment id: their number is bounded by the deployments in
 * progress, never by the fleet.
 */
export function rolloutMetrics(metrics: ServiceMetrics, figures: DeploymentFigures) {
  const reports = metrics.counter('ota_device_status_reports_total', 'Device status reports stored, by event and failure reason (none for events without one; other for reasons outside the documented list).', ['event', 'reason']);
  const downloads = metrics.counter('ota_device_downloads_total', 'Images devices reported downloaded, by how they came: image (whole), patch (a delta patch applied), fell_back (a patch given up for the whole image).', ['how']);
  const patchBytes = metrics.counter('ota_delta_patch_bytes_total', 'Bytes of the delta patches devices reported applied.');
  const fallbacks = metrics.counter('ota_delta_fallbacks_total', 'Delta patches devices gave up for the whole image, by why (other for reasons outside the documented list).', ['delta_failure']);
  for (const how of ['image', 'patch', 'fell_back']) downloads.inc({ how }, 0);
  const guardrailTrips = metrics.counter('ota_guardrail_trips_total', 'Deployments paused by a guardrail, by guardrail (failure_threshold, reason_limit, health_regression).', ['guardrail']);
  for (const guardrail of ['failure_threshold', 'reason_limit', 'health_regression']) guardrailTrips.inc({ guardrail }, 0);
  // Failures are served from 0 for every reason a label may hold, so that the first reports of a
  // burst count as an increase (OtaSignatureInvalidBurst), not as a series that starts high.
  for (const event of ['failed', 'rolled_back']) for (const reason of [...METRIC_FAILURE_REASONS, 'other', 'none']) reports.inc({ event, reason }, 0);
  // The four gauges are read together, once per scrape, or once per FIGURES_MAX_AGE_MS when
  // scrapes come closer.
  const refresh = sharedRead(() => read(), FIGURES_MAX_AGE_MS);
  const state = metrics.gauge('ota_deployment_state', '1 for each active or paused deployment, labelled with its state and, when paused, by whom (failure_threshold, reason_limit, health_regression: a guardrail; person).', ['deployment_id', 'project_id', 'state', 'paused_by'], refresh);
  const percentage = metrics.gauge('ota_deployment_rollout_percentage', 'The rollout percentage of each active or paused deployment.', ['deployment_id', 'project_id'], refresh);
  const devices = metrics.gauge('ota_deployment_devices', 'Devices of each active or paused deployment, by rollout status.', ['deployment_id', 'project_id', 'status'], refresh);
  const failures = metrics.gauge('ota_deployment_failures', 'Failures of each active or paused deployment, by reason.', ['deployment_id', 'project_id', 'reason'], refresh);

  async function read(): Promise<void> {
    const live = await figures.liveDeployments();
    const counts = await Promise.all(live.map((deployment) => figures.countsOf(deployment.id)));
    // Series of deployments that ended since the last read must go, not stay at their last value.
    for (const gauge of [state, percentage, devices, failures]) gauge.reset();
    live.forEach((deployment, index) => {
      const ids = { deployment_id: deployment.id, project_id: deployment.projectId };
      const pausedBy = deployment.state !== 'paused' ? '' : (deployment.guardrailPause?.guardrail ?? 'person');
      state.set({ ...ids, state: deployment.state, paused_by: pausedBy }, 1);
      percentage.set(ids, deployment.rolloutPercentage);
      for (const [status, count] of counts[index]!.byStatus) devices.set({ ...ids, status }, count);
      const byReason = new Map<string, number>();
      for (const [reason, count] of counts[index]!.failuresByReason) {
        const label = boundedLabel(reason, METRIC_FAILURE_REASONS);
        byReason.set(label, (byReason.get(label) ?? 0) + count);
      }
      for (const [reason, count] of byReason) failures.set({ ...ids, reason }, count);
    });
  }

  return {
    reportStored(event: string, reason: string, detailJson = ''): void {
      reports.inc({ event, reason: boundedLabel(reason, METRIC_FAILURE_REASONS) });
      if (event !== 'downloaded') return;
      const download = downloadOf(detailJson);
      downloads.inc({ how: download.how });
      if (download.patchBytes > 0) patchBytes.inc(download.patchBytes);
      if (download.how === 'fell_back') fallbacks.inc({ delta_failure: boundedLabel(download.failure, METRIC_DELTA_FAILURES) });
    },
    pausedByGuardrail(deployment: Deployment): void {
      if (deployment.guardrailPause) guardrailTrips.inc({ guardrail: deployment.guardrailPause.guardrail });
    },
  };
}

export type RolloutMetrics = ReturnType<typeof rolloutMetrics>;
