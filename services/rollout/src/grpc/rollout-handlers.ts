import { scheduleOfMessage, type OfferOutcome } from '@ota/decision';
import { invalidArgument } from '@ota/errors';
import type { Handlers } from '@ota/grpc';
import { rollout as pb } from '@ota/proto';
import type { Guardrails } from '../domain/guardrails';
import { HEALTH_REGRESSION_DEFAULTS, HEALTH_SIDES, type HealthFigures, type HealthRegressionGuardrail, type HealthSide } from '../domain/health-regression';
import type { RolloutMetrics } from '../adapters/rollout-metrics';
import type { Deployment } from '../domain/model';
import type { DeviceStateRecord } from '../domain/ports';
import { nextStage, type Stage } from '../domain/stages';
import type { Rollout } from '../domain/rollout';

const OFFER_OUTCOMES: Record<OfferOutcome, pb.OfferOutcome> = {
  recorded: pb.OfferOutcome.OFFER_OUTCOME_RECORDED,
  not_active: pb.OfferOutcome.OFFER_OUTCOME_NOT_ACTIVE,
  rolled_back: pb.OfferOutcome.OFFER_OUTCOME_ROLLED_BACK,
  capped: pb.OfferOutcome.OFFER_OUTCOME_CAPPED,
};

/** The methods kept for the release before, served by previous-release/handlers.ts. */
export type PreviousReleaseMethods = 'decideOffer';

/** `metrics` counts stored reports; tests that do not look at metrics leave it out. */
export function rolloutHandlers(rollout: Rollout, metrics?: Pick<RolloutMetrics, 'reportStored'>): Omit<Handlers<typeof pb.RolloutServiceService>, PreviousReleaseMethods> {
  return {
    async createDeployment(request, ctx) {
      const deployment = await rollout.deployments.createDeployment(
        {
          projectId: request.projectId,
          artifactId: request.artifactId,
          targetGroupIds: request.targetGroupIds,
          targetChannelIds: request.targetChannelIds,
          rolloutPercentage: request.rolloutPercentage,
          rolloutStrategy: request.rolloutStrategy,
          notes: request.notes,
          start: request.start,
          guardrails: guardrailsOf(request.guardrails),
          stages: request.stages.map(stageOf),
          maintenance: request.maintenance ? scheduleOfMessage(request.maintenance) : null,
          caps: request.caps ? { offersPerMinute: request.caps.offersPerMinute ?? null, maxInProgress: request.caps.maxInProgress ?? null } : null,
        },
        ctx,
      );
      return { deployment: deploymentMessage(deployment) };
    },
    async getDeployment(request) {
      return { deployment: deploymentMessage(await rollout.deployments.getDeployment(request.projectId, request.deploymentId)) };
    },
    async listDeployments(request) {
      return { deployments: (await rollout.deployments.listDeployments(request.projectId)).map(deploymentMessage) };
    },
    async transitionDeployment(request) {
      const deployment = await rollout.deployments.transition(
        request.projectId,
        request.deploymentId,
        { action: request.action, rolloutPercentage: request.rolloutPercentage, confirmAll: request.confirmAll, projectDeviceCount: request.projectDeviceCount },
        request.expectedVersion,
      );
      return { deployment: deploymentMessage(deployment) };
    },
    async listDeviceStates(request) {
      const message = (state: DeviceStateRecord) => ({ deviceUuid: state.deviceUuid, status: state.status, reason: state.reason, updatedAt: state.updatedAt });
      if (request.limit > 0) {
        const page = await rollout.devices.readDeviceStatesPage(request.projectId, request.deploymentId, { limit: request.limit, afterId: request.afterId || undefined, status: request.status || undefined });
        return { states: page.states.map(message), total: page.total.count, totalEstimated: page.total.estimated, nextAfterId: page.nextAfterId ?? '' };
      }
      const states = await rollout.devices.listDeviceStates(request.projectId, request.deploymentId);
      const matching = request.status ? states.filter((state) => state.status === request.status) : states;
      return { states: matching.map(message), total: matching.length, totalEstimated: false, nextAfterId: '' };
    },
    async countDeployments(request) {
      return { count: await rollout.deployments.countDeployments(request.projectId, request.states, request.artifactId || undefined) };
    },
    async listBuildHolds(request) {
      return { holds: await rollout.deployments.buildHolds(request.projectId, request.artifactId, request.exceptDeploymentId) };
    },
    async retireTarget(request) {
      const inTheWay = await rollout.deployments.retireTarget(request.projectId, request.kind, request.id, request.retire);
      return { inTheWay: inTheWay.map(deploymentMessage) };
    },
    async deleteDeviceStates(request) {
      await rollout.devices.deleteDeviceStates(request.projectId, request.deviceUuid);
      return {};
    },
    async listActiveDeployments() {
      return { deployments: (await rollout.deployments.listActiveDeployments()).map(deploymentMessage) };
    },
    async recordOffer(request) {
      const outcome = await rollout.devices.recordOffer(request.projectId, request.deploymentId, request.deviceUuid);
      return { outcome: OFFER_OUTCOMES[outcome] };
    },
    async recordDeviceEvent(request) {
      const result = await rollout.devices.recordDeviceEvent({
        projectId: request.projectId,
        deploymentId: request.deploymentId,
        deviceUuid: request.deviceUuid,
        event: request.event,
        reason: request.reason,
        buildNumber: request.buildNumber,
        detailJson: request.detailJson,
        deferredUntil: request.deferredUntil,
      });
      metrics?.reportStored(request.event, request.reason, request.detailJson);
      return result;
    },
    async listDeviceReports(request) {
      const reports = await rollout.devices.listDeviceReports(request.projectId, request.deviceUuid, request.limit, request.since);
      return {
        reports: reports.map((report) => ({
          id: report.id,
          deploymentId: report.deploymentId,
          event: report.event,
          status: report.status,
          buildNumber: report.buildNumber,
          reason: report.reason,
          detailJson: report.detailJson,
          createdAt: report.createdAt,
          deferredUntil: report.deferredUntil,
        })),
      };
    },
    async checkStates(request) {
      return { checkStates: rollout.devices.checkStates(request.projectId, request.devices) };
    },
    async recordDeviceHealth(request) {
      const sides = new Set<string>(HEALTH_SIDES);
      const unknown = request.tallies.find((tally) => !sides.has(tally.side));
      if (unknown) throw invalidArgument(`unknown health side "${unknown.side}"`);
      await rollout.deployments.recordDeviceHealth(
        request.tallies.map((tally) => ({
          projectId: tally.projectId,
          deploymentId: tally.deploymentId,
          side: tally.side as HealthSide,
          periodStart: tally.periodStart ?? new Date(0),
          deviceSeconds: tally.deviceSeconds,
          abnormalResets: tally.abnormalResets,
          devices: tally.devices,
          source: tally.source,
        })),
      );
      return {};
    },
    async countDownloads(request) {
      if (Boolean(request.deploymentId) === Boolean(request.artifactId)) throw invalidArgument('name one deployment_id or one artifact_id');
      const counts = await rollout.deployments.downloads(request.projectId, request.deploymentId ? { deploymentId: request.deploymentId } : { artifactId: request.artifactId });
      return { patched: counts.patched, whole: counts.whole, fellBack: counts.fellBack, patchBytes: counts.patchBytes };
    },
    async getDeploymentHealth(request) {
      const health = await rollout.deployments.deploymentHealth(request.projectId, request.deploymentId);
      const tallyMessage = (side: HealthSide, figures: HealthFigures, periodStart?: Date): pb.HealthTally => ({
        projectId: '',
        deploymentId: '',
        side,
        periodStart,
        deviceSeconds: figures.deviceSeconds,
        abnormalResets: figures.abnormalResets,
        devices: figures.devices,
        source: '',
      });
      return {
        periods: health.periods.map((period) => tallyMessage(period.side, period, period.periodStart)),
        updated: tallyMessage('updated', health.judged.updated),
        previous: tallyMessage('previous', health.judged.previous),
        judgedSince: health.judgedSince ?? undefined,
      };
    },
    async getDeploymentSummary(request) {
      const summary = await rollout.deployments.deploymentSummary(request.projectId, request.deploymentId);
      return {
        devicesByStatus: Object.fromEntries(summary.devicesByStatus),
        failureCount: summary.failureCount,
        failuresByReason: Object.fromEntries(summary.failuresByReason),
        deferredDevices: summary.deferrals.devices,
        deferredUntil: summary.deferrals.until ?? undefined,
        windowOpensAt: summary.heldNow.windowOpensAt ?? undefined,
        capsRoom: summary.heldNow.capsRoom ?? undefined,
        deployment: deploymentMessage(summary.deployment),
      };
    },
    async previewDeployment(request, ctx) {
      if (!/^[0-9a-f]{0,2}$/.test(request.idPrefix)) throw invalidArgument('id_prefix is 0 to 2 lowercase hex digits');
      const { state, tally, heldNow } = await rollout.deployments.previewDeployment(request.projectId, request.deploymentId, request.idPrefix, ctx);
      return {
        deviceCount: tally.total,
        buckets: [...tally.buckets].map(([outcome, bucket]) => ({ outcome, count: bucket.count, deviceIds: bucket.deviceIds })),
        rolloutPercentage: tally.rolloutPercentage,
        state,
        windowOpensAt: heldNow.windowOpensAt ?? undefined,
        capsRoom: heldNow.capsRoom ?? undefined,
      };
    },
  };
}

function deploymentMessage(deployment: Deployment): pb.Deployment {
  const next = deployment.state === 'active' || deployment.state === 'paused' ? nextStage(deployment.stages, deployment.stage) : null;
  return {
    id: deployment.id,
    projectId: deployment.projectId,
    artifactId: deployment.artifactId,
    buildNumber: deployment.buildNumber,
    versionLabel: deployment.versionLabel,
    version: deployment.version,
    state: deployment.state,
    targetGroupIds: deployment.targetGroupIds,
    targetChannelIds: deployment.targetChannelIds,
    rolloutPercentage: deployment.rolloutPercentage,
    rolloutStrategy: deployment.rolloutStrategy,
    notes: deployment.notes,
    failureCount: deployment.failureCount,
    createdAt: deployment.createdAt,
    startedAt: deployment.startedAt ?? undefined,
    updatedAt: deployment.updatedAt,
    guardrails: guardrailsMessage(deployment.guardrails),
    stages: deployment.stages,
    stageIndex: deployment.stage.index,
    stageEnteredAt: deployment.stage.enteredAt ?? undefined,
    guardrailPause: deployment.guardrailPause ?? undefined,
    nextStageAt: next?.dueAt,
    nextStageNeedsApproval: next?.approvalRequired ?? false,
    caps: deployment.caps ? { offersPerMinute: deployment.caps.offersPerMinute ?? undefined, maxInProgress: deployment.caps.maxInProgress ?? undefined } : undefined,
    maintenance: deployment.maintenance ? { timeZone: deployment.maintenance.timeZone, inDeviceLocalTime: deployment.maintenance.inDeviceLocalTime, windows: deployment.maintenance.windows.map((window) => ({ ...window, days: [...window.days] })) } : undefined,
  };
}


function guardrailsOf(message: pb.Guardrails | undefined): Guardrails {
  return {
    failureThreshold: message?.failureThreshold ?? null,
    reasonLimits: message?.reasonLimits ?? [],
    confirmTimeoutSeconds: message?.confirmTimeoutSeconds ?? null,
    healthRegression: message?.healthRegression ? healthRegressionOf(message.healthRegression) : null,
  };
}

/** A field the client left out takes its default. */
function healthRegressionOf(message: pb.HealthRegression): HealthRegressionGuardrail {
  const defaults = HEALTH_REGRESSION_DEFAULTS;
  return {
    marginPercent: message.marginPercent ?? defaults.marginPercent,
    significance: message.significance ?? defaults.significance,
    minDevices: message.minDevices ?? defaults.minDevices,
    minDeviceHours: message.minDeviceHours ?? defaults.minDeviceHours,
  };
}

function guardrailsMessage(guardrails: Guardrails): pb.Guardrails {
  return {
    failureThreshold: guardrails.failureThreshold ?? undefined,
    reasonLimits: guardrails.reasonLimits,
    confirmTimeoutSeconds: guardrails.confirmTimeoutSeconds ?? undefined,
    healthRegression: guardrails.healthRegression ?? undefined,
  };
}

function stageOf(message: pb.Stage): Stage {
  return { percentage: message.percentage, minWaitSeconds: message.minWaitSeconds, approvalRequired: message.approvalRequired };
}
