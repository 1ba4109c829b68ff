import { randomUUID } from 'node:crypto';
import type { MaintenanceSchedule, Weekday } from '@ota/decision';
import { collectionOf, insertUnique } from '@ota/mongo';
import type { Guardrails } from '../../domain/guardrails';
import type { Deployment, DeploymentState, GuardrailPause } from '../../domain/model';
import type { DeploymentStore, TransitionFields as DomainTransitionFields } from '../../domain/ports';
import type { Stage } from '../../domain/stages';
import type { DeploymentDoc, GuardrailPauseDoc, GuardrailsDoc, MaintenanceDoc, RetiredTargetDoc, RolloutModels, StageDoc, TransitionDoc, TransitionFields } from './models';

/** Deployments (collection `deployments`); a transition claims the deployment's next version. */
export class MongoDeploymentStore implements DeploymentStore {
  constructor(private readonly models: RolloutModels) {}

  async insertDeployment(deployment: Deployment): Promise<void> {
    await collectionOf(this.models.Deployment).insertOne(docOf(deployment));
  }

  async findDeployment(id: string): Promise<Deployment | null> {
    const doc = await this.models.Deployment.findById(id).lean<DeploymentDoc>();
    return doc ? deploymentOf(doc) : null;
  }

  async listDeployments(projectId: string): Promise<Deployment[]> {
    const docs = await this.models.Deployment.find({ project_id: projectId }).sort({ created_at: -1, _id: 1 }).lean<DeploymentDoc[]>();
    return docs.map(deploymentOf);
  }

  async listActiveOrPausedDeployments(): Promise<Deployment[]> {
    const docs = await this.models.Deployment.find({ state: { $in: ['active', 'paused'] } }).lean<DeploymentDoc[]>();
    return docs.map(deploymentOf);
  }

  async listActiveDeployments(): Promise<Deployment[]> {
    const docs = await this.models.Deployment.find({ state: 'active' }).lean<DeploymentDoc[]>();
    return docs.map(deploymentOf);
  }

  async applyTransition(id: string, fromVersion: number, set: DomainTransitionFields): Promise<Deployment | null> {
    const fields: TransitionFields = {
      state: set.state,
      rollout_percentage: set.rolloutPercentage,
      started_at: set.startedAt,
      updated_at: set.updatedAt,
      stage_index: set.stage.index,
      stage_entered_at: set.stage.enteredAt,
      guardrail_pause: set.guardrailPause ? guardrailPauseDocOf(set.guardrailPause) : null,
      guardrails_judged_since: set.guardrailsJudgedSince,
    };
    const version = fromVersion + 1;
    // Claiming the version is the atomic step; a filtered update would not be one on FerretDB.
    const claimed = await insertUnique(collectionOf(this.models.Transition), { _id: `${id}:${version}`, deployment_id: id, version, set: fields } satisfies TransitionDoc);
    if (!claimed) {
      await this.catchUp(id);
      return null;
    }
    await collectionOf(this.models.Deployment).updateOne({ _id: id }, { $set: { ...fields, version } });
    return this.findDeployment(id);
  }

  /**
   * Applies the newest claimed transition to the deployment, in case its claimer stopped between
   * claiming and applying; applying it twice is harmless.
   */
  private async catchUp(id: string): Promise<void> {
    const [latest] = await this.models.Transition.find({ deployment_id: id }).sort({ version: -1 }).limit(1).lean<TransitionDoc[]>();
    if (!latest) return;
    await collectionOf(this.models.Deployment).updateOne({ _id: id, version: { $lt: latest.version } }, {
      $set: { ...latest.set, version: latest.version },
    });
  }

  countDeployments(projectId: string, states: readonly DeploymentState[], artifactId?: string): Promise<number> {
    const filter: Record<string, unknown> = { project_id: projectId, state: { $in: [...states] } };
    if (artifactId) filter.artifact_id = artifactId;
    return this.models.Deployment.countDocuments(filter).exec();
  }

  async deleteDeployment(id: string): Promise<void> {
    await collectionOf(this.models.Deployment).deleteOne({ _id: id });
  }

  async fence(projectId: string, target: string): Promise<string> {
    // One document per fence, so that lifting a refused one never lifts another request's.
    const fenceId = randomUUID();
    await collectionOf(this.models.RetiredTarget).insertOne({ _id: fenceId, target, project_id: projectId, at: new Date(), settled: false } satisfies RetiredTargetDoc);
    return fenceId;
  }

  async settleFence(fenceId: string): Promise<void> {
    await collectionOf(this.models.RetiredTarget).updateOne({ _id: fenceId }, { $set: { settled: true } });
  }

  async liftFence(which: { fenceId: string } | { target: string }): Promise<void> {
    await collectionOf(this.models.RetiredTarget).deleteMany(('fenceId' in which ? { _id: which.fenceId } : { target: which.target }));
  }

  async fencesOn(targets: readonly string[]): Promise<Array<{ target: string; settled: boolean }>> {
    const docs = await this.models.RetiredTarget.find({ target: { $in: [...targets] } }, { target: 1, settled: 1 }).lean<RetiredTargetDoc[]>();
    // A fence from before fences settled is a retirement that went ahead.
    return docs.map((doc) => ({ target: doc.target, settled: doc.settled ?? true }));
  }
}

function docOf(deployment: Deployment): DeploymentDoc {
  return {
    _id: deployment.id,
    project_id: deployment.projectId,
    artifact_id: deployment.artifactId,
    build_number: deployment.buildNumber,
    version_label: deployment.versionLabel,
    state: deployment.state,
    target_group_ids: deployment.targetGroupIds,
    target_channel_ids: deployment.targetChannelIds,
    rollout_percentage: deployment.rolloutPercentage,
    rollout_strategy: deployment.rolloutStrategy,
    notes: deployment.notes,
    created_at: deployment.createdAt,
    started_at: deployment.startedAt,
    updated_at: deployment.updatedAt,
    version: deployment.version,
    guardrails: guardrailsDocOf(deployment.guardrails),
    stages: deployment.stages.map((stage) => ({ percentage: stage.percentage, min_wait_seconds: stage.minWaitSeconds, approval_required: stage.approvalRequired })),
    stage_index: deployment.stage.index,
    stage_entered_at: deployment.stage.enteredAt,
    guardrail_pause: deployment.guardrailPause ? guardrailPauseDocOf(deployment.guardrailPause) : null,
    guardrails_judged_since: deployment.guardrailsJudgedSince,
    maintenance: deployment.maintenance && maintenanceDocOf(deployment.maintenance),
    caps: deployment.caps && { offers_per_minute: deployment.caps.offersPerMinute, max_in_progress: deployment.caps.maxInProgress },
  };
}

function maintenanceDocOf(schedule: MaintenanceSchedule): MaintenanceDoc {
  return {
    time_zone: schedule.timeZone,
    in_device_local_time: schedule.inDeviceLocalTime,
    windows: schedule.windows.map((window) => ({ days: [...window.days], start: window.start, duration_minutes: window.durationMinutes })),
  };
}

function maintenanceOf(doc: MaintenanceDoc): MaintenanceSchedule {
  return {
    timeZone: doc.time_zone,
    inDeviceLocalTime: doc.in_device_local_time,
    windows: doc.windows.map((window) => ({ days: window.days as Weekday[], start: window.start, durationMinutes: window.duration_minutes })),
  };
}

function guardrailsDocOf(guardrails: Guardrails): GuardrailsDoc {
  const threshold = guardrails.failureThreshold;
  const health = guardrails.healthRegression;
  return {
    failure_threshold: threshold ? { percent: threshold.percent, min_finished: threshold.minFinished } : null,
    reason_limits: guardrails.reasonLimits.map((limit) => ({ reason: limit.reason, count: limit.count, window_seconds: limit.windowSeconds })),
    confirm_timeout_seconds: guardrails.confirmTimeoutSeconds,
    health_regression: health
      ? { margin_percent: health.marginPercent, significance: health.significance, min_devices: health.minDevices, min_device_hours: health.minDeviceHours }
      : null,
  };
}

function guardrailPauseDocOf(pause: GuardrailPause): GuardrailPauseDoc {
  return { guardrail: pause.guardrail, detail: pause.detail, figures: pause.figures, at: pause.at };
}

function guardrailsOf(doc: GuardrailsDoc | undefined): Guardrails {
  const threshold = doc?.failure_threshold;
  const health = doc?.health_regression;
  return {
    failureThreshold: threshold ? { percent: threshold.percent, minFinished: threshold.min_finished } : null,
    reasonLimits: (doc?.reason_limits ?? []).map((limit) => ({ reason: limit.reason, count: limit.count, windowSeconds: limit.window_seconds })),
    confirmTimeoutSeconds: doc?.confirm_timeout_seconds ?? null,
    healthRegression: health
      ? { marginPercent: health.margin_percent, significance: health.significance, minDevices: health.min_devices, minDeviceHours: health.min_device_hours }
      : null,
  };
}

function stageOf(doc: StageDoc): Stage {
  return { percentage: doc.percentage, minWaitSeconds: doc.min_wait_seconds, approvalRequired: doc.approval_required };
}

function deploymentOf(doc: DeploymentDoc): Deployment {
  return {
    id: doc._id,
    projectId: doc.project_id,
    artifactId: doc.artifact_id,
    buildNumber: doc.build_number,
    versionLabel: doc.version_label,
    state: doc.state,
    targetGroupIds: doc.target_group_ids ?? [],
    targetChannelIds: doc.target_channel_ids ?? [],
    rolloutPercentage: doc.rollout_percentage,
    rolloutStrategy: doc.rollout_strategy,
    notes: doc.notes ?? '',
    // Derived from the device events; the rollout domain fills it in.
    failureCount: 0,
    createdAt: doc.created_at,
    startedAt: doc.started_at ?? null,
    updatedAt: doc.updated_at,
    version: doc.version ?? 1,
    guardrails: guardrailsOf(doc.guardrails),
    stages: (doc.stages ?? []).map(stageOf),
    stage: { index: doc.stage_index ?? 0, enteredAt: doc.stage_entered_at ?? doc.started_at ?? null },
    guardrailPause: doc.guardrail_pause ? { ...doc.guardrail_pause, at: new Date(doc.guardrail_pause.at) } : null,
    guardrailsJudgedSince: doc.guardrails_judged_since ? new Date(doc.guardrails_judged_since) : null,
    maintenance: doc.maintenance ? maintenanceOf(doc.maintenance) : null,
    caps: doc.caps ? { offersPerMinute: doc.caps.offers_per_minute ?? null, maxInProgress: doc.caps.max_in_progress ?? null } : null,
  };
}
