import { collectionOf, findEach, insertUnique } from '@ota/mongo';
import type { BuildCount, FleetBuildStore, FleetScope, FleetSnapshot } from '../../domain/fleet-builds';
import type { FleetSnapshotDoc, RegistryModels } from './models';

/** A group's members are counted this many devices at a time. */
const MEMBER_BATCH = 1_000;

/** The fleet's builds in `devices` and `memberships`, and their snapshots in `fleet_snapshots`. */
export class MongoFleetSnapshotStore implements FleetBuildStore {
  constructor(private readonly models: RegistryModels) {}

  async scopeExists(projectId: string, scope: FleetScope): Promise<boolean> {
    if (scope.kind === 'project') return true;
    const model = scope.kind === 'channel' ? this.models.Channel : this.models.Group;
    return (await (model as typeof this.models.Group).exists({ _id: scope.id, project_id: projectId })) !== null;
  }

  async countBuilds(projectId: string, scope: FleetScope): Promise<BuildCount[]> {
    if (scope.kind !== 'group') {
      return this.count({ project_id: projectId, ...(scope.kind === 'channel' ? { channel_id: scope.id } : {}), active: true });
    }
    // No joins on FerretDB: a group's members are read in batches, and each batch's devices one by
    // one by id (findEach: FerretDB v1 would read every device of the project for an $in).
    const totals = new Map<number, number>();
    let batch: string[] = [];
    const countBatch = async () => {
      const devices = await findEach(collectionOf(this.models.Device), '_id', batch, { alsoMatching: { project_id: projectId }, projection: { current_build_number: 1, active: 1 } });
      for (const device of devices) if (device.active) totals.set(device.current_build_number ?? 0, (totals.get(device.current_build_number ?? 0) ?? 0) + 1);
      batch = [];
    };
    for await (const member of this.models.Membership.find({ group_id: scope.id, project_id: projectId }, { device_id: 1 }).lean<Array<{ device_id: string }>>().cursor()) {
      batch.push(member.device_id);
      if (batch.length === MEMBER_BATCH) await countBatch();
    }
    if (batch.length > 0) await countBatch();
    return sortedCounts(totals);
  }

  private async count(match: Record<string, unknown>): Promise<BuildCount[]> {
    const rows = await this.models.Device.aggregate<{ _id: number | null; devices: number }>([{ $match: match }, { $group: { _id: '$current_build_number', devices: { $sum: 1 } } }]);
    return sortedCounts(new Map(rows.map((row) => [row._id ?? 0, row.devices])));
  }

  async projectsWithScopes(): Promise<Array<{ projectId: string; channelIds: string[]; groupIds: string[] }>> {
    const [projects, channels, groups] = await Promise.all([
      this.models.Project.find({}, { _id: 1 }).lean<Array<{ _id: string }>>(),
      this.models.Channel.find({}, { _id: 1, project_id: 1 }).lean<Array<{ _id: string; project_id: string }>>(),
      this.models.Group.find({}, { _id: 1, project_id: 1 }).lean<Array<{ _id: string; project_id: string }>>(),
    ]);
    const idsByProject = (docs: Array<{ _id: string; project_id: string }>) => {
      const byProject = new Map<string, string[]>();
      for (const doc of docs) byProject.set(doc.project_id, [...(byProject.get(doc.project_id) ?? []), doc._id]);
      return byProject;
    };
    const [channelIds, groupIds] = [idsByProject(channels), idsByProject(groups)];
    return projects.map((project) => ({ projectId: project._id, channelIds: channelIds.get(project._id) ?? [], groupIds: groupIds.get(project._id) ?? [] }));
  }

  claimPeriod(projectId: string, at: Date): Promise<boolean> {
    const claim: FleetSnapshotDoc = { _id: `${projectId}:claim::${at.toISOString()}`, project_id: projectId, scope: 'claim', scope_id: '', at, builds: [] };
    return insertUnique(collectionOf(this.models.FleetSnapshot), claim);
  }

  async saveSnapshot(snapshot: FleetSnapshot): Promise<void> {
    const [scope, scopeId] = scopeFields(snapshot.scope);
    const doc: FleetSnapshotDoc = {
      _id: `${snapshot.projectId}:${scope}:${scopeId}:${snapshot.at.toISOString()}`,
      project_id: snapshot.projectId,
      scope,
      scope_id: scopeId,
      at: snapshot.at,
      builds: snapshot.builds.map((count) => ({ build_number: count.buildNumber, devices: count.devices })),
    };
    await insertUnique(collectionOf(this.models.FleetSnapshot), doc);
  }

  async snapshots(projectId: string, scope: FleetScope, since: Date, until: Date): Promise<FleetSnapshot[]> {
    const [kind, scopeId] = scopeFields(scope);
    const docs = await this.models.FleetSnapshot.find({ project_id: projectId, scope: kind, scope_id: scopeId, at: { $gte: since, $lte: until } })
      .sort({ at: 1 })
      .lean<FleetSnapshotDoc[]>();
    return docs.map((doc) => ({ projectId, scope, at: doc.at, builds: doc.builds.map((count) => ({ buildNumber: count.build_number, devices: count.devices })) }));
  }

  async forgetBefore(projectId: string, before: Date): Promise<void> {
    await this.models.FleetSnapshot.deleteMany({ project_id: projectId, at: { $lt: before } });
  }
}

function scopeFields(scope: FleetScope): [Exclude<FleetSnapshotDoc['scope'], 'claim'>, string] {
  return scope.kind === 'project' ? ['project', ''] : [scope.kind, scope.id];
}

function sortedCounts(totals: Map<number, number>): BuildCount[] {
  return [...totals].map(([buildNumber, devices]) => ({ buildNumber, devices })).sort((a, b) => a.buildNumber - b.buildNumber);
}
