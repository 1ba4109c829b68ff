import { devicePageKey } from '@ota/ids';
import { selectionFields, type BucketChange, type MembershipChange, type MembershipChangeStore } from '../../domain/membership-changes';
import type { MembershipChangeDoc, RegistryModels } from './models';
import { groupMembers, insertMemberships } from './mongo-registry-store';
import { equalityFilterOf, membershipOf } from './registry-documents';
import { collectionOf } from '@ota/mongo';

/**
 * The store of bulk membership changes (domain/membership-changes.ts), and each bucket's step.
 *
 * A step reads the bucket's matches (the members of the groups the selection names, from their
 * memberships; the other filters from the device documents, by equality: on FerretDB the only
 * filters PostgreSQL sees) and inserts or deletes their memberships, which are all there is of a
 * group: no device document is written.
 */
export class MongoMembershipChangeStore implements MembershipChangeStore {
  constructor(private readonly models: RegistryModels) {}

  async insertChange(change: MembershipChange, runner: string, leaseUntil: Date): Promise<void> {
    await collectionOf(this.models.MembershipChange).insertOne(docOf(change, runner, leaseUntil));
  }

  async findChange(id: string): Promise<MembershipChange | null> {
    const doc = await this.models.MembershipChange.findById(id).lean<MembershipChangeDoc>();
    return doc ? changeOf(doc) : null;
  }

  async claimChange(id: string, runner: string, now: Date, leaseUntil: Date): Promise<MembershipChange | null> {
    const doc = await this.models.MembershipChange.findOneAndUpdate(
      { _id: id, state: 'running', $or: [{ runner }, { lease_until: { $lt: now } }] },
      { $set: { runner, lease_until: leaseUntil } },
      { new: true },
    ).lean<MembershipChangeDoc>();
    return doc ? changeOf(doc) : null;
  }

  async saveProgress(change: MembershipChange, runner: string, leaseUntil: Date): Promise<boolean> {
    const saved = await this.models.MembershipChange.updateOne(
      { _id: change.id, runner, state: 'running' },
      { $set: { buckets_done: change.bucketsDone, devices_matched: change.devicesMatched, added: change.added, removed: change.removed, lease_until: leaseUntil } },
    );
    return saved.matchedCount === 1;
  }

  async finishChange(change: MembershipChange, runner: string): Promise<boolean> {
    const finished = await this.models.MembershipChange.updateOne(
      { _id: change.id, runner, state: 'running' },
      {
        $set: {
          state: change.state,
          buckets_done: change.bucketsDone,
          devices_matched: change.devicesMatched,
          added: change.added,
          removed: change.removed,
          finished_at: change.finishedAt,
          detail: change.detail,
        },
      },
    );
    return finished.matchedCount === 1;
  }

  async markAudited(id: string): Promise<void> {
    await this.models.MembershipChange.updateOne({ _id: id }, { $set: { audited: true } });
  }

  async changesToResume(now: Date): Promise<Array<{ id: string; state: MembershipChange['state'] }>> {
    // Two equality reads (the only kind FerretDB hands PostgreSQL); few changes are ever unaudited or running.
    const [running, unaudited] = await Promise.all([
      this.models.MembershipChange.find({ state: 'running' }, { state: 1, lease_until: 1 }).lean<Array<Pick<MembershipChangeDoc, '_id' | 'state' | 'lease_until'>>>(),
      this.models.MembershipChange.find({ audited: false }, { state: 1 }).lean<Array<Pick<MembershipChangeDoc, '_id' | 'state'>>>(),
    ]);
    return [
      ...running.filter((doc) => doc.lease_until < now).map((doc) => ({ id: doc._id, state: doc.state })),
      ...unaudited.filter((doc) => doc.state !== 'running').map((doc) => ({ id: doc._id, state: doc.state })),
    ];
  }

  async changeBucket(change: MembershipChange, prefix: string): Promise<BucketChange> {
    const { projectId, groupId } = change;
    const ids = await this.matchesOf(change, prefix);
    if (ids.length === 0) return { matched: 0, changed: 0 };
    const changed = change.action === 'add' ? await insertMemberships(this.models, ids.map((id) => membershipOf(projectId, groupId, id))) : await deleteMembershipsOf(this.models, groupId, prefix, ids);
    return { matched: ids.length, changed };
  }

  /**
   * The UUIDs of the bucket's devices the change applies to: the members, in the bucket, of every
   * group the selection names (and of the group itself, for a removal), read from those groups'
   * memberships, where FerretDB decodes a membership in about a third of what a device document
   * costs it (docs/performance.md, "The preview from device profiles"); and, with any other
   * filter, of the bucket's devices that match it.
   */
  private async matchesOf(change: MembershipChange, prefix: string): Promise<string[]> {
    const { projectId, matching } = change;
    const groups = [...(matching.groupId ? [matching.groupId] : []), ...(change.action === 'remove' ? [change.groupId] : [])];
    const byGroupsAlone = matching.active === undefined && !matching.channelId && !matching.chipFamily && !matching.search;
    const memberSets = await Promise.all(groups.map(async (group) => new Set(await groupMembers(this.models, group, devicePageKey(group, prefix)))));
    if (byGroupsAlone && memberSets.length > 0) {
      const [first, ...others] = memberSets;
      return [...first!].filter((id) => others.every((members) => members.has(id)));
    }
    const selection = { ...equalityFilterOf(projectId, { ...matching, groupId: undefined, search: undefined }), page_keys: devicePageKey(projectId, prefix) };
    const search = matching.search?.toLowerCase();
    return (await this.models.Device.find(selection, { _id: 1, device_id: 1 }).lean<Array<{ _id: string; device_id: string }>>())
      .filter((doc) => (!search || doc.device_id.toLowerCase().includes(search)) && memberSets.every((members) => members.has(doc._id)))
      .map((doc) => doc._id);
  }
}

/** Deletes the group's memberships of `deviceIds`, which are in the bucket `prefix`; answers how many existed. */
async function deleteMembershipsOf(models: RegistryModels, groupId: string, prefix: string, deviceIds: string[]): Promise<number> {
  const ids = deviceIds.map((id) => `${groupId}:${id}`);
  // The group's members in this bucket are what PostgreSQL reads; the ids narrow them to the matches.
  const deleted = (await models.Membership.deleteMany({ group_keys: devicePageKey(groupId, prefix), _id: { $in: ids } })).deletedCount;
  if (deleted === ids.length) return deleted;
  // A membership without group keys (written by the release before, after the migration ran) is
  // deleted by its primary key; so is one a concurrent change deleted meanwhile (a no-op then).
  let byKey = 0;
  for (const _id of ids) byKey += (await models.Membership.deleteOne({ _id })).deletedCount;
  return deleted + byKey;
}

function docOf(change: MembershipChange, runner: string, leaseUntil: Date): MembershipChangeDoc {
  const { matching, actor } = change;
  return {
    _id: change.id,
    project_id: change.projectId,
    group_id: change.groupId,
    action: change.action,
    matching: selectionFields(matching),
    actor: { type: actor.type, id: actor.id, token_prefix: actor.tokenPrefix, role: actor.role, via: actor.via },
    state: change.state,
    level: change.level,
    buckets_done: change.bucketsDone,
    devices_matched: change.devicesMatched,
    added: change.added,
    removed: change.removed,
    devices_expected: change.devicesExpected,
    created_at: change.createdAt,
    finished_at: change.finishedAt,
    detail: change.detail,
    audited: change.audited,
    runner,
    lease_until: leaseUntil,
  };
}

function changeOf(doc: MembershipChangeDoc): MembershipChange {
  const { matching, actor } = doc;
  return {
    id: doc._id,
    projectId: doc.project_id,
    groupId: doc.group_id,
    action: doc.action,
    matching: { active: matching.active, groupId: matching.group_id, channelId: matching.channel_id, chipFamily: matching.chip_family, search: matching.search },
    actor: { type: actor.type, id: actor.id, tokenPrefix: actor.token_prefix, role: actor.role ?? '', via: actor.via ?? '' },
    state: doc.state,
    level: doc.level,
    bucketsDone: doc.buckets_done,
    devicesMatched: doc.devices_matched,
    added: doc.added,
    removed: doc.removed,
    devicesExpected: doc.devices_expected,
    createdAt: doc.created_at,
    finishedAt: doc.finished_at,
    detail: doc.detail,
    audited: doc.audited,
  };
}
