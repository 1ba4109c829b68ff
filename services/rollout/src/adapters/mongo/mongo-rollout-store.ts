import { randomUUID } from 'node:crypto';
import { insertUnique } from '@ota/mongo';
import type { DeviceStatusEntry } from '../../domain/device-status-cache';
import { ROLLOUT_STATUSES, bitOf, statusOfBits } from '../../domain/device-status';
import type { Guardrails } from '../../domain/guardrails';
import type { Deployment, DeploymentState, GuardrailPause } from '../../domain/model';
import type { DeploymentStore, DeviceEvent, DeviceReport, DeviceReportStore, DeviceStateRecord, DeviceStateStore, TransitionFields as DomainTransitionFields } from '../../domain/ports';
import type { Stage } from '../../domain/stages';
import type { DeploymentDoc, DeviceEventDoc, DeviceReportDoc, GuardrailPauseDoc, GuardrailsDoc, RolloutModels, StageDoc, TransitionDoc, TransitionFields } from './models';

/** The device events a deployment's failure counter counts: every failure report, and one rolled_back per device. */
const FAILURES = { $or: [{ kind: 'failure' }, { kind: 'status', status: 'rolled_back' }] };

export class MongoRolloutStore implements DeploymentStore, DeviceStateStore, DeviceReportStore {
  constructor(private readonly models: RolloutModels) {}

  async insertDeployment(deployment: Deployment): Promise<void> {
    await this.models.Deployment.collection.insertOne(docOf(deployment) as never);
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
    const claimed = await insertUnique(this.models.Transition.collection, { _id: `${id}:${version}`, deployment_id: id, version, set: fields } satisfies TransitionDoc);
    if (!claimed) {
      await this.catchUp(id);
      return null;
    }
    await this.models.Deployment.collection.updateOne({ _id: id } as never, { $set: { ...fields, version } });
    return this.findDeployment(id);
  }

  /**
   * Applies the newest claimed transition to the deployment, in case its claimer stopped between
   * claiming and applying; applying it twice is harmless.
   */
  private async catchUp(id: string): Promise<void> {
    const [latest] = await this.models.Transition.find({ deployment_id: id }).sort({ version: -1 }).limit(1).lean<TransitionDoc[]>();
    if (!latest) return;
    await this.models.Deployment.collection.updateOne({ _id: id, version: { $lt: latest.version } } as never, {
      $set: { ...latest.set, version: latest.version },
    });
  }

  countDeployments(projectId: string, states: readonly DeploymentState[], artifactId?: string): Promise<number> {
    const filter: Record<string, unknown> = { project_id: projectId, state: { $in: [...states] } };
    if (artifactId) filter.artifact_id = artifactId;
    return this.models.Deployment.countDocuments(filter).exec();
  }

  async listStates(deploymentId: string): Promise<DeviceStateRecord[]> {
    const docs = await this.models.DeviceEvent.find({ deployment_id: deploymentId, kind: 'status' }).lean<DeviceEventDoc[]>();
    const latest = new Map<string, DeviceEventDoc>();
    for (const doc of docs) {
      const current = latest.get(doc.device_id);
      if (!current || doc.rank > current.rank) latest.set(doc.device_id, doc);
    }
    return [...latest.values()]
      .sort((a, b) => b.at.getTime() - a.at.getTime() || a.device_id.localeCompare(b.device_id))
      .map((doc) => ({ deviceId: doc.device_id, status: doc.status, reason: doc.reason ?? '', updatedAt: doc.at }));
  }

  async devicesByStatus(deploymentId: string, window: { since?: Date; before?: Date } = {}): Promise<Map<string, number>> {
    // Per device, the sum of the bits of the statuses it reached; then devices per sum. The second
    // stage leaves one row per combination of statuses seen, however many devices there are.
    const at = { ...(window.since ? { $gte: window.since } : {}), ...(window.before ? { $lt: window.before } : {}) };
    const rows = await this.models.DeviceEvent.aggregate<{ _id: number; devices: number }>([
      { $match: { deployment_id: deploymentId, kind: 'status', ...(Object.keys(at).length > 0 ? { at } : {}) } },
      { $group: { _id: '$device_id', bits: { $sum: '$bit' } } },
      { $group: { _id: '$bits', devices: { $sum: 1 } } },
    ]);
    const counts = new Map<string, number>();
    for (const row of rows) {
      const status = statusOfBits(row._id);
      if (status) counts.set(status, (counts.get(status) ?? 0) + row.devices);
    }
    return counts;
  }

  countRecentFailures(deploymentId: string, reason: string, since: Date): Promise<number> {
    return this.models.DeviceEvent.countDocuments({ deployment_id: deploymentId, ...FAILURES, reason, at: { $gte: since } }).exec();
  }

  async failuresByReason(deploymentId: string, before?: Date): Promise<Map<string, number>> {
    const rows = await this.models.DeviceEvent.aggregate<{ _id: string | null; failures: number }>([
      { $match: { deployment_id: deploymentId, ...FAILURES, ...(before ? { at: { $lt: before } } : {}) } },
      { $group: { _id: '$reason', failures: { $sum: 1 } } },
    ]);
    return new Map(rows.map((row) => [row._id ?? '', row.failures]));
  }

  /**
   * Status documents stored before they carried their bit get it (idempotent; run by migrate.js
   * and at start, so that `devicesByStatus` counts every device).
   */
  async backfillStatusBits(): Promise<void> {
    for (const status of ROLLOUT_STATUSES) {
      await this.models.DeviceEvent.collection.updateMany({ kind: 'status', status, bit: { $exists: false } } as never, { $set: { bit: bitOf(status) } });
    }
  }

  async deleteDeviceStates(projectId: string, deviceId: string): Promise<string[]> {
    const deploymentIds: string[] = await this.models.DeviceEvent.distinct('deployment_id', { project_id: projectId, device_id: deviceId });
    await this.models.DeviceEvent.deleteMany({ project_id: projectId, device_id: deviceId });
    await this.models.DeviceReport.deleteMany({ project_id: projectId, device_id: deviceId });
    return deploymentIds;
  }

  async insertReport(report: DeviceReport): Promise<void> {
    const doc: DeviceReportDoc = {
      _id: report.id,
      project_id: report.projectId,
      deployment_id: report.deploymentId,
      device_id: report.deviceId,
      event: report.event,
      status: report.status,
      build_number: report.buildNumber ?? null,
      reason: report.reason,
      detail_json: report.detailJson,
      created_at: report.createdAt,
    };
    await this.models.DeviceReport.collection.insertOne(doc as never);
  }

  async listReports(projectId: string, deviceId: string, limit: number, since: Date | undefined): Promise<DeviceReport[]> {
    const query: Record<string, unknown> = { project_id: projectId, device_id: deviceId };
    if (since) query.created_at = { $gte: since };
    const docs = await this.models.DeviceReport.find(query).sort({ created_at: -1, _id: -1 }).limit(limit).lean<DeviceReportDoc[]>();
    return docs.map((doc) => ({
      id: doc._id,
      projectId: doc.project_id,
      deploymentId: doc.deployment_id,
      deviceId: doc.device_id,
      event: doc.event,
      status: doc.status,
      buildNumber: doc.build_number ?? undefined,
      reason: doc.reason ?? '',
      detailJson: doc.detail_json ?? '',
      createdAt: doc.created_at,
    }));
  }

  async trimReports(deviceId: string, keep: number): Promise<void> {
    const older = await this.models.DeviceReport.find({ device_id: deviceId }, { _id: 1 }).sort({ created_at: -1, _id: -1 }).skip(keep).lean<Array<{ _id: string }>>();
    if (older.length > 0) await this.models.DeviceReport.deleteMany({ _id: { $in: older.map((doc) => doc._id) } });
  }

  async recordEvent(event: DeviceEvent): Promise<{ newlyStored: boolean }> {
    const key = `${event.deploymentId}:${event.deviceId}`;
    const doc = (kind: DeviceEventDoc['kind'], _id: string): DeviceEventDoc => ({
      _id,
      kind,
      deployment_id: event.deploymentId,
      project_id: event.projectId,
      device_id: event.deviceId,
      status: event.status,
      rank: event.rank,
      bit: kind === 'status' ? bitOf(event.status) : 0,
      reason: event.reason,
      at: event.at,
    });
    if (event.status === 'failed') await this.models.DeviceEvent.collection.insertOne(doc('failure', `${key}:failed:${randomUUID()}`) as never);
    // Not inserted: the device already reached this status (a repeated or resent event, stored once).
    return { newlyStored: await insertUnique(this.models.DeviceEvent.collection, doc('status', `${key}:${event.status}`)) };
  }

  async highestStatus(deploymentId: string, deviceId: string): Promise<DeviceStatusEntry | null> {
    const docs = await this.models.DeviceEvent.find({ deployment_id: deploymentId, device_id: deviceId, kind: 'status' }, { status: 1, rank: 1 }).lean<
      DeviceEventDoc[]
    >();
    if (docs.length === 0) return null;
    const highest = docs.reduce((best, doc) => (doc.rank > best.rank ? doc : best));
    return { status: highest.status, rank: highest.rank, rolledBack: docs.some((doc) => doc.status === 'rolled_back') };
  }

  async rolledBackDevices(deploymentIds: readonly string[]): Promise<Map<string, Set<string>>> {
    const docs = await this.models.DeviceEvent.find(
      { deployment_id: { $in: [...deploymentIds] }, kind: 'status', status: 'rolled_back' },
      { deployment_id: 1, device_id: 1 },
    ).lean<Pick<DeviceEventDoc, 'deployment_id' | 'device_id'>[]>();
    const deploymentsByDevice = new Map<string, Set<string>>();
    for (const doc of docs) deploymentsByDevice.set(doc.device_id, (deploymentsByDevice.get(doc.device_id) ?? new Set()).add(doc.deployment_id));
    return deploymentsByDevice;
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
  };
}

function guardrailsDocOf(guardrails: Guardrails): GuardrailsDoc {
  const threshold = guardrails.failureThreshold;
  return {
    failure_threshold: threshold ? { percent: threshold.percent, min_finished: threshold.minFinished } : null,
    reason_limits: guardrails.reasonLimits.map((limit) => ({ reason: limit.reason, count: limit.count, window_seconds: limit.windowSeconds })),
    confirm_timeout_seconds: guardrails.confirmTimeoutSeconds,
  };
}

function guardrailPauseDocOf(pause: GuardrailPause): GuardrailPauseDoc {
  return { guardrail: pause.guardrail, detail: pause.detail, figures: pause.figures, at: pause.at };
}

function guardrailsOf(doc: GuardrailsDoc | undefined): Guardrails {
  const threshold = doc?.failure_threshold;
  return {
    failureThreshold: threshold ? { percent: threshold.percent, minFinished: threshold.min_finished } : null,
    reasonLimits: (doc?.reason_limits ?? []).map((limit) => ({ reason: limit.reason, count: limit.count, windowSeconds: limit.window_seconds })),
    confirmTimeoutSeconds: doc?.confirm_timeout_seconds ?? null,
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
  };
}
