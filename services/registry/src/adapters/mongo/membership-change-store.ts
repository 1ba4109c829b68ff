import { devicePageKey } from '@ota/ids';
import { selectionFields, type BucketChange, type MembershipChange, type MembershipChangeStore } from '../../domain/membership-changes';
import type { MembershipChangeDoc, RegistryModels } from './models';
import { insertMemberships } from './mongo-registry-store';
import { equalityFilterOf, membershipOf } from './registry-documents';
import { collectionOf } from '@ota/mongo';

/**
 * The store of bulk membership changes (domain/membership-changes.ts), and each bucket's step.
 *
 * A step reads the bucket's matches (of a selection by groups alone, from those groups'
 * memberships; otherwise from the device documents, by equality: on FerretDB the only filters
 * PostgreSQL sees), writes the memberships, which are the truth of a group, then the devices'
 * copies with one `$addToSet` or `$pull` over the equality filter. The copies are then checked
 * against the group's memberships in the bucket: a concurrent single change of the same device may
 * have undone a membership between the two writes, and such a device is copied again on its own,
 * as a single change copies it (copyGroupIds).
 */
export class MongoMembershipChangeStore implements MembershipChangeStore {
  constructor(
    private readonly models: RegistryModels,
    /** Copies one device's memberships onto it and checks the copy (the store's single-change path). */
    private readonly copyGroupIds: (deviceUuid: string) => Promise<void>,
  ) {}

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
    const { projectId, groupId, matching } = change;
    const pageKey = devicePageKey(projectId, prefix);
    const selection: Record<string, unknown> = { ...equalityFilterOf(projectId, { ...matching, search: undefined }), page_keys: pageKey };
    // Removing takes only the group's members (the check below corrects a device's stale copy).
    if (change.action === 'remove') selection.group_ids = groupId;
    const ids = await this.matchesOf(change, prefix, selection);
    if (ids.length === 0) return { matched: 0, changed: 0 };

    const changed = change.action === 'add' ? await insertMemberships(this.models, ids.map((id) => membershipOf(projectId, groupId, id))) : await deleteMembershipsOf(this.models, groupId, prefix, ids);
    const copies = await collectionOf(this.models.Device).updateMany(
      { ...selection, _id: { $in: ids } },
      change.action === 'add' ? { $addToSet: { group_ids: groupId } } : ({ $pull: { group_ids: groupId } }),
    );

    // Copies that may disagree with the memberships: every device when one left the selection
    // between the read and the write, otherwise those whose membership a concurrent change undid.
    const members = new Set(await this.membersIn(groupId, prefix));
    const stale = copies.matchedCount < ids.length ? ids : ids.filter((id) => members.has(id) !== (change.action === 'add'));
    for (const id of stale) await this.copyGroupIds(id);
    return { matched: ids.length, changed };
  }

  /**
   * The UUIDs of the bucket's devices the change applies to. A selection by groups alone (the
   * members of one group added to another, or a group's members removed) is read from the
   * memberships of those groups in the bucket: FerretDB decodes a membership in about a third of
   * what a device document costs it (docs/performance.md, "The preview from device profiles").
   * Any other filter is matched on the device documents.
   */
  private async matchesOf(change: MembershipChange, prefix: string, selection: Record<string, unknown>): Promise<string[]> {
    const { matching } = change;
    const groups = [...(matching.groupId ? [matching.groupId] : []), ...(change.action === 'remove' ? [change.groupId] : [])];
    const byGroupsAlone = matching.active === undefined && !matching.channelId && !matching.chipFamily && !matching.search;
    if (byGroupsAlone && groups.length > 0) {
      const [first, ...others] = await Promise.all(groups.map((group) => this.membersIn(group, prefix)));
      const alsoIn = others.map((members) => new Set(members));
      return first!.filter((id) => alsoIn.every((members) => members.has(id)));
    }
    const search = matching.search?.toLowerCase();
    return (await this.models.Device.find(selection, { _id: 1, device_id: 1 }).lean<Array<{ _id: string; device_id: string }>>())
      .filter((doc) => !search || doc.device_id.toLowerCase().includes(search))
      .map((doc) => doc._id);
  }

  /**
   * The UUIDs of the group's members in the bucket `prefix`, by the one key of both (models.ts,
   * `group_keys`): a filter on the group too would let PostgreSQL read every member of the group.
   */
  private async membersIn(groupId: string, prefix: string): Promise<string[]> {
    return (await this.models.Membership.find({ group_keys: devicePageKey(groupId, prefix) }, { device_id: 1 }).lean<Array<{ device_id: string }>>()).map((doc) => doc.device_id);
  }
}

/** Deletes the group's memberships of `deviceIds`, which are in the bucket `prefix`; answers how many existed. */
async function deleteMembershipsOf(models: RegistryModels, groupId: string, prefix: string, deviceIds: string[]): Promise<number> {
  const ids = deviceIds.map((id) => `${groupId}:${id}`);
  // The group's members in this bucket are what PostgreSQL reads; the ids narrow them to the matches.
  const deleted = (await models.Membership.deleteMany({ group_keys: devicePageKey(groupId, prefix), _id: { $in: ids } })).deletedCount;
  if (deleted === ids.length) return deleted;
  // A membership without group keys (written by the release before, after the migration ran) is
  // deleted by its primary key; so are the rest when a device's copy was stale (a no-op then).
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
