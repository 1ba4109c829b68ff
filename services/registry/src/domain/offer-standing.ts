// Whether an offer a device is downloading still stands (docs/api.md, "Stopping devices
// mid-update"): the device asks between chunks and before it switches its boot slot, so that a
// pause, a cancel or an archive reaches it within a bounded number of bytes.
import { admittedByRollout, targetsDevice, type ArtifactSummary, type DecisionDeployment } from '@ota/decision';
import { isDomainError, notFound, permissionDenied } from '@ota/errors';
import type { OutboundCall } from '@ota/logging';
import { CHECK_MESSAGES, type StopStatus } from '@ota/vocabulary';
import type { Registry } from './registry';

export type OfferStanding = { standing: true } | { standing: false; status: StopStatus; hold: boolean; message: string };

export interface OfferStandingDeps {
  registry: Pick<Registry, 'getDevice'>;
  /** The builds, for whether one is archived. */
  views: { artifact(artifactId: string): ArtifactSummary | undefined };
  /** The deployment from rollout, which holds the truth; null when there is none. */
  loadDeployment(id: string, projectId: string, call: OutboundCall): Promise<DecisionDeployment | null>;
}

export interface OfferStandingInput {
  projectId: string;
  /** The unit's own device_id string. */
  deviceId: string;
  viaProjectToken: boolean;
  deploymentId: string;
}

const STOPS: Record<StopStatus, { hold: boolean; message: string }> = {
  deployment_paused: { hold: true, message: 'the deployment is paused: keep the bytes and check again later' },
  deployment_cancelled: { hold: false, message: 'the deployment was cancelled' },
  deployment_completed: { hold: false, message: 'the deployment was completed: it offers nothing more' },
  build_archived: { hold: false, message: 'the build was archived' },
  device_inactive: { hold: false, message: CHECK_MESSAGES.device_inactive },
  device_unknown: { hold: false, message: 'no such device in this project' },
  not_targeted: { hold: false, message: "the deployment no longer targets the device's groups or channel" },
  not_in_rollout: { hold: true, message: "the deployment's percentage no longer admits the device: keep the bytes and check again later" },
};

const stop = (status: StopStatus): OfferStanding => ({ standing: false, status, ...STOPS[status] });

/**
 * Read only: nothing is recorded, so a device may ask as often as its chunks come. A deployment
 * that never existed in the project is 404, as for a status report.
 */
export async function offerStanding(deps: OfferStandingDeps, input: OfferStandingInput, call: OutboundCall): Promise<OfferStanding> {
  const device = await deps.registry.getDevice(input.projectId, { deviceId: input.deviceId }).catch((error: unknown) => {
    if (isDomainError(error, 'NotFound')) return undefined;
    throw error;
  });
  if (!device) return stop('device_unknown');
  if (device.tokenRequired && input.viaProjectToken) throw permissionDenied(CHECK_MESSAGES.token_required);
  if (!device.active) return stop('device_inactive');

  // Read from rollout, not from this replica's views: a transition is in rollout's store before
  // it answers, so a device that asks after a pause or cancel was answered hears of it, where the
  // views would follow it over NATS a few milliseconds later.
  const deployment = await deps.loadDeployment(input.deploymentId, input.projectId, call);
  if (!deployment || deployment.projectId !== input.projectId) throw notFound('deployment not found');
  if (deps.views.artifact(deployment.artifactId)?.archived) return stop('build_archived');
  switch (deployment.state) {
    case 'active':
      if (!targetsDevice(deployment, device)) return stop('not_targeted');
      if (!admittedByRollout(deployment.id, device.id, deployment.rolloutPercentage)) return stop('not_in_rollout');
      return { standing: true };
    case 'paused':
      return stop('deployment_paused');
    case 'completed':
      return stop('deployment_completed');
    default:
      // cancelled, or a draft (which never offered anything)
      return stop('deployment_cancelled');
  }
}
