// A device's profile: what a check decides on (docs/architecture.md, "Device profiles"). Each device
// has one small document in `device_profiles`, derived from its device document, so that a
// deployment preview reads the fleet at about a fifth of what FerretDB spends on decoding the device
// documents (docs/performance.md, "The preview from device profiles"). Group ids are not in it: the
// memberships are their truth, and a preview reads only those of the groups deployments target.
import { profileOf, type HardwareProfile } from '@ota/manifest';
import { devicePageKey } from '@ota/ids';
import { collectionOf, findAll, isDuplicateKey, updateEachById } from '@ota/mongo';
import type { FleetDevice, FleetGroups } from '../../domain/model';
import type { DeviceDoc, DeviceProfileDoc, RegistryModels } from './models';
import { PROFILE_COUNT_BUCKET_LEVEL, bucketsOf, profileKeysOf, type PROFILE_BUCKET_LEVEL } from './profile-buckets';
import { ProfilePacks } from './profile-packs';

/** The device fields a profile is made of. */
const PROFILED_FIELDS = {
  project_id: 1,
  device_id: 1,
  active: 1,
  channel_id: 1,
  current_build_number: 1,
  framework: 1,
  chip_family: 1,
  board_id: 1,
  hardware_revision: 1,
  partition_profile: 1,
  nvs_schema_version: 1,
  security_mode: 1,
  chip_revision: 1,
  secure_version: 1,
} as const;

export type ProfiledDoc = Pick<DeviceDoc, '_id' | keyof typeof PROFILED_FIELDS>;

/** What a count by channel or chip family reads of a device's profile, named as on the device. */
export interface ProfileCounted {
  _id: string;
  channel_id: string;
  chip_family: string;
}

/** A profile's fields, in the order of its JSON array. */
type ProfileArray = [
  deviceId: string,
  active: boolean,
  channelId: string,
  currentBuildNumber: number,
  framework: string,
  chipFamily: string,
  boardId: string,
  hardwareRevision: string,
  partitionProfile: string,
  nvsSchemaVersion: number | null,
  securityMode: string,
  // Absent from a profile written before devices reported them.
  chipRevision?: number | null,
  secureVersion?: number | null,
];

/**
 * The profile document of a device. One string holds every field, because FerretDB v1 decodes each
 * field of a document with its type: three fields cost it about 30 µs a document where the device
 * document's 29 cost about 165.
 */
export function profileDocOf(doc: ProfiledDoc): DeviceProfileDoc {
  const hardware = profileOf(doc);
  const profile: ProfileArray = [
    doc.device_id,
    doc.active ?? true,
    doc.channel_id ?? '',
    doc.current_build_number ?? 0,
    hardware.framework,
    hardware.chipFamily,
    hardware.boardId,
    hardware.hardwareRevision,
    hardware.partitionProfile,
    hardware.nvsSchemaVersion,
    hardware.securityMode,
    hardware.chipRevision,
    hardware.secureVersion,
  ];
  return { _id: doc._id, ...profileKeysOf(doc.project_id, doc._id), p: JSON.stringify(profile) };
}

function fleetDeviceOf(id: string, profile: ProfileArray, groupIds: string[]): FleetDevice {
  const [deviceId, active, channelId, currentBuildNumber, framework, chipFamily, boardId, hardwareRevision, partitionProfile, nvsSchemaVersion, securityMode, chipRevision, secureVersion] = profile;
  const hardware: HardwareProfile = {
    framework,
    chipFamily,
    boardId,
    hardwareRevision,
    partitionProfile,
    nvsSchemaVersion,
    securityMode,
    chipRevision: chipRevision ?? null,
    secureVersion: secureVersion ?? null,
  };
  return { id, deviceId, active, channelId, groupIds, currentBuildNumber, ...hardware };
}

/** Whether a change of these device fields may change the device's profile. */
export function changesProfile(fields: object): boolean {
  return Object.keys(fields).some((field) => field in PROFILED_FIELDS);
}

/**
 * Whether writing `set` over the stored `before` changes the device's profile. Called on every
 * check: the fields are compared first, and the profiles made only when one differs (a stored
 * field the store left out and a blank one make the same profile).
 */
export function changedProfile(before: ProfiledDoc, set: Partial<ProfiledDoc>): boolean {
  const differs = (Object.keys(set) as Array<keyof ProfiledDoc>).some((field) => field in PROFILED_FIELDS && set[field] !== before[field]);
  return differs && profileDocOf({ ...before, ...set }).p !== profileDocOf(before).p;
}

/** Rewrites of one profile before its writer gives up on a device that keeps changing (each one is judged again by the next change's writer). */
const REFRESH_ATTEMPTS = 5;

export class DeviceProfiles {
  private readonly packs: ProfilePacks;

  /** `packAt`: how many profiles of a finer bucket make it worth a pack (PACK_AT; tests make it small). */
  constructor(
    private readonly models: RegistryModels,
    packAt?: number,
  ) {
    this.packs = new ProfilePacks(models, packAt);
  }

  /**
   * Writes the device's profile from its stored document, then reads the document again: a
   * concurrent change may have been written between the read and our profile write, and its own
   * profile write may have come before ours. Whoever writes a profile last checks it afterwards,
   * so the profile ends as the document is. A deleted device's profile is deleted. Each write is
   * followed by a change for the packs (profile-packs.ts).
   */
  async refresh(id: string, written?: ProfiledDoc): Promise<void> {
    // `written`: the document as the caller's own write left it, which saves the first read.
    let known = written;
    for (let attempt = 0; attempt < REFRESH_ATTEMPTS; attempt += 1) {
      const doc = known ?? (await this.readProfiled(id));
      known = undefined;
      if (!doc) {
        await this.remove(id);
        return;
      }
      const profile = profileDocOf(doc);
      try {
        await collectionOf(this.models.DeviceProfile).updateOne({ _id: id }, { $set: { k: profile.k, k3: profile.k3, p: profile.p } }, { upsert: true });
      } catch (error) {
        // Two first writes of one profile: the other upsert inserted it; read and write again.
        if (!isDuplicateKey(error)) throw error;
        continue;
      }
      await this.packs.changed(profile.k, id);
      const now = await this.readProfiled(id);
      if (now && profileDocOf(now).p === profile.p) return;
    }
  }

  /** Deletes the device's profile, and tells the packs. */
  async remove(id: string): Promise<void> {
    const removed = await collectionOf(this.models.DeviceProfile).findOneAndDelete({ _id: id });
    if (removed) await this.packs.changed(removed.k, id);
  }

  /** Deletes the packs of a project's profiles, and their changes. */
  dropPacks(projectId: string): Promise<void> {
    return this.packs.drop(projectId, bucketsOf(projectId, ''));
  }

  /**
   * The project's devices whose UUID begins with `idPrefix`, `pageSize` at a time, one profile
   * bucket after another, from its packs where it has them (profile-packs.ts). Each device's group ids are those of `groups` it is a member of, from the
   * memberships of the bucket. The next page is read while the caller takes this one, so the store
   * and this process work at once.
   */
  stream(projectId: string, idPrefix: string, pageSize: number, groups: FleetGroups): AsyncIterable<FleetDevice[]> {
    return readOneAhead(this.pages(projectId, idPrefix, pageSize, groups));
  }

  private async *pages(projectId: string, idPrefix: string, pageSize: number, groups: FleetGroups): AsyncGenerator<FleetDevice[]> {
    const packed = await this.packs.isPacked(projectId);
    for (const bucket of bucketsOf(projectId, idPrefix)) {
      const groupsOf = new Map<string, string[]>();
      for (const membership of await this.membershipsOf(bucket, groups)) groupsOf.set(membership.device_id, [...(groupsOf.get(membership.device_id) ?? []), membership.group_id]);
      let page: FleetDevice[] = [];
      for await (const part of this.packs.read(bucket, pageSize, packed)) {
        for (const [id, profile] of part) {
          if (!id.startsWith(idPrefix)) continue;
          page.push(fleetDeviceOf(id, profile as ProfileArray, groupsOf.get(id) ?? []));
          if (page.length === pageSize) {
            yield page;
            page = [];
          }
        }
      }
      if (page.length > 0) yield page;
    }
  }

  /**
   * The channel and chip family of each device of the profile bucket `bucket`, a page key of `level`
   * (PROFILE_COUNT_BUCKET_LEVEL, kept in `k3`, or PROFILE_BUCKET_LEVEL, in `k`): what the project's
   * counts by channel and chip family sample.
   */
  async countedIn(level: typeof PROFILE_COUNT_BUCKET_LEVEL | typeof PROFILE_BUCKET_LEVEL, bucket: string): Promise<ProfileCounted[]> {
    const field = level === PROFILE_COUNT_BUCKET_LEVEL ? 'k3' : 'k';
    const docs = await findAll<DeviceProfileDoc>(this.models.DeviceProfile, { [field]: bucket });
    return docs.map((doc) => {
      const [, , channelId, , , chipFamily] = JSON.parse(doc.p) as ProfileArray;
      return { _id: doc._id, channel_id: channelId, chip_family: chipFamily };
    });
  }

  /** The memberships of the bucket's devices in `groups`: each group's by its key of group and bucket (models.ts, `group_keys`), or every one of the bucket. */
  private async membershipsOf(bucket: string, groups: FleetGroups): Promise<Array<{ device_id: string; group_id: string }>> {
    const fields = { projection: { device_id: 1, group_id: 1 } };
    const inBucket = (filter: Record<string, string>) => findAll<{ device_id: string; group_id: string }>(this.models.Membership, filter, fields);
    // PREVIOUS RELEASE: only its rollout asks for every group, during an upgrade from it.
    if (groups === 'all') return inBucket({ page_keys: bucket });
    const prefix = bucket.slice(bucket.lastIndexOf('/') + 1);
    const perGroup = await Promise.all(groups.map((groupId) => inBucket({ group_keys: devicePageKey(groupId, prefix) })));
    return perGroup.flat();
  }

  private readProfiled(id: string): Promise<ProfiledDoc | null> {
    return collectionOf(this.models.Device).findOne({ _id: id }, { projection: PROFILED_FIELDS }) as Promise<ProfiledDoc | null>;
  }
}

/**
 * The items of `items`, each next one asked for as soon as the one before is handed out. When the
 * caller stops early, the source is closed once the read under way has ended.
 */
async function* readOneAhead<T>(items: AsyncGenerator<T>): AsyncGenerator<T> {
  let next = items.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = items.next();
      yield result.value;
    }
  } finally {
    // A generator runs one request at a time: the return waits for the read under way.
    next.catch(() => undefined);
    await items.return(undefined);
  }
}

/** Every device's profile, for a store that has devices from before profiles (data-migrations.ts): the packs are dropped after it. */
export async function writeEveryProfile(models: RegistryModels): Promise<void> {
  const BATCH = 1_000;
  let batch: DeviceProfileDoc[] = [];
  const write = async () => {
    if (batch.length === 0) return;
    await updateEachById(
      collectionOf(models.DeviceProfile),
      batch.map((profile) => ({ _id: profile._id, update: { $set: { k: profile.k, k3: profile.k3, p: profile.p } }, upsert: true })),
    );
    batch = [];
  };
  for await (const doc of collectionOf(models.Device).find({}, { projection: PROFILED_FIELDS })) {
    batch.push(profileDocOf(doc as ProfiledDoc));
    if (batch.length === BATCH) await write();
  }
  await write();
}
