import type { Deferral } from '@ota/decision';
import { PerKeyQueue, collectionOf, deleteEachById, findAll, findEach, insertUnique, isDuplicateKey, releasePlace, takePlace } from '@ota/mongo';
import { DEVICE_PAGE_LEVELS, SAMPLE_DEVICES, countFromSample, deviceUuid, devicePageKey, readDevicePage, sampleBuckets, sampleDevices, type DeviceSample } from '@ota/ids';
import type { Channel, DecisionRecord, CheckIn, DecisionRecordWrite, CountsById, CountsPerId, Device, DeviceCount, DeviceFilter, DevicePage, DevicePageRead, FleetDevice, FleetGroups, Group, Project, ProjectSettings, StatusReportWrite, WholeCheckWrite } from '../../domain/model';
import { DeviceProfiles, changedProfile, changesProfile, type ProfileCounted } from './device-profiles';
import { PROFILE_BUCKET_LEVEL, PROFILE_COUNT_BUCKET_LEVEL } from './profile-buckets';
import type { DeviceTargets, Registration, RegistryStore } from '../../domain/ports';
import { decodeDecisionRecordEntry } from './decision-record-entry';
import { changedFields, channelOf, decisionRecordDoc, deviceOf, docOf, equalityFilterOf, groupOf, healthDocOf, heartbeatFields, heartbeatFilter, matchesEquality, membershipOf, projectOf } from './registry-documents';
import { OwnersAtCap } from './owners-at-cap';
import { DEVICE_FIELDS, type ChannelDoc, type DecisionRecordEntry, type DeviceDoc, type GroupDoc, type MembershipDoc, type ProjectDoc, type RegistryModels } from './models';

export interface StoreOptions {
  /** Devices a page of a device list may read before it answers with what it found (DEVICE_PAGE_READ_BUDGET). */
  devicePageReadBudget: number;
  /** About how many devices a count of a large project reads (DEVICE_COUNT_SAMPLE). */
  countSample: number;
  /** Told how many devices each page read from the store. */
  onDevicePageRead?: (devices: number) => void;
  /** Profiles of a finer bucket that make it worth a pack (PACK_AT in profile-packs.ts unless given; tests make it small). */
  profilePackAt?: number;
  /** The clock of the owners remembered at their device cap (tests move it on). */
  now?: () => number;
}

/** A count the store filters (one group, one channel) reads this share of DEVICE_COUNT_SAMPLE's devices. */
const MATCHED_SAMPLE_DIVISOR = 4;

export class MongoRegistryStore implements RegistryStore {
  private readonly deviceWrites = new PerKeyQueue();
  private readonly profiles: DeviceProfiles;
  private readonly ownersAtCap: OwnersAtCap;

  constructor(
    private readonly models: RegistryModels,
    private readonly options: StoreOptions = { devicePageReadBudget: 500, countSample: SAMPLE_DEVICES },
  ) {
    this.profiles = new DeviceProfiles(models, options.profilePackAt);
    this.ownersAtCap = new OwnersAtCap(options.now);
  }

  async insertProject(project: Project): Promise<'inserted' | 'slug_taken'> {
    const inserted = await insertUnique(collectionOf(this.models.Project), {
      _id: project.id,
      name: project.name,
      slug: project.slug,
      owner_id: project.ownerId,
      created_at: project.createdAt,
      require_esp_image: project.requireEspImage,
    } satisfies ProjectDoc);
    return inserted ? 'inserted' : 'slug_taken';
  }

  async findProject(projectId: string): Promise<Project | null> {
    const doc = await this.models.Project.findById(projectId).lean<ProjectDoc>();
    return doc ? projectOf(doc) : null;
  }

  async updateProjectSettings(projectId: string, settings: ProjectSettings): Promise<Project | null> {
    const set: Partial<ProjectDoc> = {};
    if (settings.requireEspImage !== undefined) set.require_esp_image = settings.requireEspImage;
    if (Object.keys(set).length > 0) await collectionOf(this.models.Project).updateOne({ _id: projectId }, { $set: set });
    return this.findProject(projectId);
  }

  async listProjects(ownerId: string): Promise<Project[]> {
    const docs = await this.models.Project.find({ owner_id: ownerId }).sort({ created_at: 1, _id: 1 }).lean<ProjectDoc[]>();
    return docs.map(projectOf);
  }

  async deleteProject(project: Project): Promise<void> {
    // No transactions on FerretDB: each step is safe to repeat, and the project record goes last,
    // so an interrupted delete can simply be run again. The packs go first too, so that removing
    // each profile writes no change for them (and again last, for any a preview made meanwhile).
    await this.profiles.dropPacks(project.id);
    const devices = await this.models.Device.find({ project_id: project.id }, { place: 1 }).lean<Array<Pick<DeviceDoc, '_id' | 'place'>>>();
    for (const device of devices) {
      await this.models.Device.deleteOne({ _id: device._id });
      await this.profiles.remove(device._id);
      await this.models.DecisionRecord.deleteMany({ device_id: device._id });
      await this.releaseDevicePlace(project.ownerId, device.place);
    }
    await this.profiles.dropPacks(project.id);
    await this.models.Membership.deleteMany({ project_id: project.id });
    await this.models.Group.deleteMany({ project_id: project.id });
    await this.models.Channel.deleteMany({ project_id: project.id });
    await this.models.Project.deleteOne({ _id: project.id });
  }

  async insertChannel(channel: Channel): Promise<'inserted' | 'name_taken'> {
    const inserted = await insertUnique(collectionOf(this.models.Channel), {
      _id: channel.id,
      project_id: channel.projectId,
      name: channel.name,
      is_default: channel.isDefault,
      created_at: channel.createdAt,
    } satisfies ChannelDoc);
    return inserted ? 'inserted' : 'name_taken';
  }

  async listChannels(projectId: string): Promise<Channel[]> {
    const docs = await this.models.Channel.find({ project_id: projectId }).sort({ name: 1, _id: 1 }).lean<ChannelDoc[]>();
    return docs.map(channelOf);
  }

  async findDefaultChannel(projectId: string): Promise<Channel | null> {
    const doc = await this.models.Channel.findOne({ project_id: projectId, is_default: true }).lean<ChannelDoc>();
    return doc ? channelOf(doc) : null;
  }

  async findChannel(projectId: string, channelId: string): Promise<Channel | null> {
    const doc = await this.models.Channel.findOne({ _id: channelId, project_id: projectId }).lean<ChannelDoc>();
    return doc ? channelOf(doc) : null;
  }

  async renameChannel(projectId: string, channelId: string, name: string): Promise<'renamed' | 'name_taken' | 'missing'> {
    return this.rename(this.models.Channel, projectId, channelId, name);
  }

  async deleteChannel(projectId: string, channelId: string): Promise<void> {
    await this.models.Channel.deleteOne({ _id: channelId, project_id: projectId });
  }

  countDevicesPerChannel(projectId: string, channelIds: readonly string[]): Promise<CountsPerId> {
    return this.countPerValue(this.sampleCounted(projectId), channelIds, (doc) => doc.channel_id, async (channelId, cap) => (await this.findCounted(projectId, undefined, { channel_id: channelId }, cap)).length);
  }

  /**
   * A rename is checked against the names taken first, and the unique index still refuses the
   * update when two renames to one name race.
   */
  private async rename(model: RegistryModels['Group'] | RegistryModels['Channel'], projectId: string, id: string, name: string): Promise<'renamed' | 'name_taken' | 'missing'> {
    // Groups and channels are named alike; either is read and written through the fields they share.
    const named = model as RegistryModels['Group'];
    const taken = await named.findOne({ project_id: projectId, name }, { _id: 1 }).lean<{ _id: string }>();
    if (taken) return taken._id === id ? 'renamed' : 'name_taken';
    try {
      const result = await collectionOf(named).updateOne({ _id: id, project_id: projectId }, { $set: { name } });
      return result.matchedCount === 0 ? 'missing' : 'renamed';
    } catch (error) {
      if (isDuplicateKey(error)) return 'name_taken';
      throw error;
    }
  }

  async insertGroup(group: Group): Promise<'inserted' | 'name_taken'> {
    const inserted = await insertUnique(collectionOf(this.models.Group), {
      _id: group.id,
      project_id: group.projectId,
      name: group.name,
      created_at: group.createdAt,
    } satisfies GroupDoc);
    return inserted ? 'inserted' : 'name_taken';
  }

  async listGroups(projectId: string): Promise<Group[]> {
    const docs = await this.models.Group.find({ project_id: projectId }).sort({ name: 1, _id: 1 }).lean<GroupDoc[]>();
    return docs.map(groupOf);
  }

  async findGroup(projectId: string, groupId: string): Promise<Group | null> {
    const doc = await this.models.Group.findOne({ _id: groupId, project_id: projectId }).lean<GroupDoc>();
    return doc ? groupOf(doc) : null;
  }

  async renameGroup(projectId: string, groupId: string, name: string): Promise<'renamed' | 'name_taken' | 'missing'> {
    return this.rename(this.models.Group, projectId, groupId, name);
  }

  async deleteGroup(projectId: string, groupId: string): Promise<void> {
    // The group first, so that no member is added meanwhile (setMembership's caller checks the
    // group); then its memberships: each step is safe to repeat.
    await this.models.Group.deleteOne({ _id: groupId, project_id: projectId });
    await this.models.Membership.deleteMany({ group_id: groupId });
  }

  /**
   * Each group's members, from a sample of the project's memberships by its page buckets
   * (`page_keys`), as a channel's devices are counted from a sample of its devices; of a small
   * project, the memberships of these groups, each read by its group.
   */
  countMembersPerGroup(projectId: string, groupIds: readonly string[]): Promise<CountsPerId> {
    const fields = { group_id: 1 };
    const sample = sampleDevices(projectId, async (pageKey) =>
      pageKey
        ? findAll<Pick<MembershipDoc, '_id' | 'group_id'>>(this.models.Membership, { page_keys: pageKey }, { projection: fields })
        : (await Promise.all(groupIds.map((groupId) => this.models.Membership.find({ group_id: groupId }, fields).lean<Array<Pick<MembershipDoc, '_id' | 'group_id'>>>().exec()))).flat(),
    this.options.countSample);
    return this.countPerValue(sample, groupIds, (doc) => doc.group_id, async (groupId, cap) => (await this.models.Membership.find({ group_id: groupId }, { _id: 1 }).limit(cap).lean()).length);
  }

  async existingDeviceIds(projectId: string, ids: readonly string[]): Promise<Set<string>> {
    const docs = await findEach(collectionOf(this.models.Device), '_id', [...new Set(ids)], { alsoMatching: { project_id: projectId }, projection: { _id: 1 } });
    return new Set(docs.map((doc) => doc._id));
  }

  async changeMemberships(projectId: string, groupId: string, add: readonly string[], remove: readonly string[]): Promise<{ added: number; removed: number }> {
    const added = add.length === 0 ? 0 : await insertMemberships(this.models, add.map((deviceUuid) => membershipOf(projectId, groupId, deviceUuid)));
    const removed = await deleteEachById(collectionOf(this.models.Membership), remove.map((deviceUuid) => `${groupId}:${deviceUuid}`), { project_id: projectId });
    return { added, removed };
  }

  async setMembership(projectId: string, deviceUuid: string, groupId: string, member: boolean): Promise<Device | null> {
    if (!(await this.findDeviceDoc(projectId, { id: deviceUuid }))) return null;
    // A membership is its own document, inserted or deleted whole (atomic on every store); the
    // device document holds no copy of its groups, which a concurrent write of it could undo.
    const _id = `${groupId}:${deviceUuid}`;
    if (member) {
      try {
        await collectionOf(this.models.Membership).insertOne(membershipOf(projectId, groupId, deviceUuid));
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    } else {
      await this.models.Membership.deleteOne({ _id });
    }
    return this.findDevice(projectId, { id: deviceUuid });
  }

  async listDevices(projectId: string, filter: DeviceFilter): Promise<Device[]> {
    const query: Record<string, unknown> = { ...equalityFilterOf(projectId, filter) };
    if (filter.search) query.device_id = { ...(filter.deviceId ? { $eq: filter.deviceId } : {}), $regex: escapeRegex(filter.search), $options: 'i' };
    // Devices named, or a group's members, are read device by device: with the list in the
    // filter, FerretDB would read the whole project. Named devices are then kept to the group.
    const named = filter.ids?.length ? filter.ids : filter.groupId ? await groupMembers(this.models, filter.groupId) : undefined;
    const docs = named
      ? (await findEach(collectionOf(this.models.Device), '_id', [...new Set(named)], { alsoMatching: query, projection: DEVICE_FIELDS })).sort((a, b) => compareText(a.device_id, b.device_id) || compareText(a._id, b._id))
      : await this.models.Device.find(query, DEVICE_FIELDS).sort({ device_id: 1, _id: 1 }).lean<DeviceDoc[]>();
    const devices = await this.withGroups(projectId, docs);
    return filter.groupId ? devices.filter((device) => device.groupIds.includes(filter.groupId!)) : devices;
  }

  /**
   * The devices of `docs`, each with its groups as its memberships say. A page's devices are
   * neighbours in UUID order, so their memberships can be read by the few finest page buckets of the
   * project they fall in (`page_keys`), when they span at most MEMBERSHIP_BUCKETS_READ. Whether a
   * bucket pays depends on how many devices the project's buckets hold (about as many each: UUIDs
   * are hashes), which the bucket holding most of the page says once read: each other bucket is
   * read whole when that many memberships are at most MEMBERSHIPS_READ_PER_DEVICE per device of the
   * page in it, and otherwise its devices are read one by one (findEach), as are devices spread
   * wider (a list in device_id order).
   */
  private async withGroups(projectId: string, docs: readonly DeviceDoc[]): Promise<Device[]> {
    if (docs.length === 0) return [];
    return joinGroups(docs, await this.membershipsOf(projectId, docs.map((doc) => doc._id)));
  }

  /**
   * The devices `ids` of the project with their groups, in the order of `ids`; an id whose device
   * is gone (deleted a moment ago; its memberships go after it) is left out. The devices and their
   * memberships are read at once, both by the ids alone: a page of a group or of a search waited
   * for one read and then the other.
   */
  private async devicesWithGroups(projectId: string, ids: readonly string[]): Promise<Device[]> {
    if (ids.length === 0) return [];
    const [docs, memberships] = await Promise.all([this.devicesByKey(projectId, ids), this.membershipsOf(projectId, ids)]);
    const byId = new Map(docs.map((doc) => [doc._id, doc]));
    return joinGroups(ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])), memberships);
  }

  /** The project's devices `ids` that exist, in no particular order, each read by its key (findEach). */
  private devicesByKey(projectId: string, ids: readonly string[]): Promise<DeviceDoc[]> {
    return findEach(collectionOf(this.models.Device), '_id', ids, { alsoMatching: { project_id: projectId }, projection: DEVICE_FIELDS });
  }

  /** The memberships of the devices `ids` (withGroups). */
  private async membershipsOf(projectId: string, ids: readonly string[]): Promise<Array<Pick<MembershipDoc, 'device_id' | 'group_id'>>> {
    const fields = { device_id: 1, group_id: 1 };
    const byKey = (keys: readonly string[]) => findEach(collectionOf(this.models.Membership), 'device_id', keys, { projection: fields });
    const inBucket = (prefix: string) => findAll<MembershipDoc>(this.models.Membership, { page_keys: devicePageKey(projectId, prefix) }, { projection: fields });
    const buckets = bucketsSpanned(ids);
    if (!buckets || buckets.length === ids.length) return byKey(ids);
    const [fullest, ...others] = buckets;
    const first = await inBucket(fullest!.prefix);
    const whole = others.filter((bucket) => first.length <= MEMBERSHIPS_READ_PER_DEVICE * bucket.ids.length);
    const oneByOne = others.filter((bucket) => !whole.includes(bucket)).flatMap((bucket) => bucket.ids);
    const [inWhole, byKeys] = await Promise.all([Promise.all(whole.map((bucket) => inBucket(bucket.prefix))), byKey(oneByOne)]);
    return [...first, ...inWhole.flat(), ...byKeys];
  }

  async readDevicePage(projectId: string, filter: Omit<DeviceFilter, 'ids'>, page: DevicePage): Promise<DevicePageRead> {
    if (filter.groupId) return this.readGroupPage(projectId, filter.groupId, filter, page);
    const equality = equalityFilterOf(projectId, filter);
    const find = <Doc>(fields: Record<string, 0 | 1>) => (pageKey: string | undefined) => findAll<Doc>(this.models.Device, pageKey ? { ...equality, page_keys: pageKey } : equality, { projection: fields });
    const common = { scope: projectId, limit: page.limit, afterId: page.afterId, readBudget: this.options.devicePageReadBudget };
    const search = filter.search?.toLowerCase();
    if (!search) {
      const read = await readDevicePage<DeviceDoc>({ ...common, find: find<DeviceDoc>(DEVICE_FIELDS) });
      this.options.onDevicePageRead?.(read.read);
      return { devices: await this.withGroups(projectId, read.docs), total: read.total, nextAfterId: read.nextAfterId };
    }
    // A search keeps few of the up to devicePageReadBudget devices it reads: it reads their ids and
    // device_ids, which the store sends and this process decodes at a fraction of a whole document,
    // then the whole of the ones it keeps (docs/performance.md, "A text search reads ids first").
    const read = await readDevicePage<SearchedDoc>({
      ...common,
      find: find<SearchedDoc>({ _id: 1, device_id: 1 }),
      // device_id is ASCII (docs/api.md), so lower case is the whole of "any case".
      keep: (doc) => doc.device_id.toLowerCase().includes(search),
    });
    this.options.onDevicePageRead?.(read.read);
    // A device deleted between the two reads is left out of the page. A page may keep up to 1,000,
    // read a few at a time (findEach), so that one search does not hold the whole pool.
    const devices = await this.devicesWithGroups(projectId, read.docs.map((doc) => doc._id));
    return { devices, total: read.total, nextAfterId: read.nextAfterId };
  }

  /**
   * A page of a group's devices: the group's memberships are walked bucket by bucket in UUID order
   * (their `group_keys`, the group's own buckets), so the work follows the group, not the project.
   * With no other filter every member matches: the page is made of memberships, and only its own
   * devices are read, by their keys. Otherwise each member's device is read by its key and the
   * filters and the text search are judged on it, so that the read budget counts the members
   * looked at, not only the matches.
   */
  private async readGroupPage(projectId: string, groupId: string, filter: Omit<DeviceFilter, 'ids'>, page: DevicePage): Promise<DevicePageRead> {
    const equality = equalityFilterOf(projectId, filter);
    const search = filter.search?.toLowerCase();
    const common = { scope: groupId, limit: page.limit, afterId: page.afterId, readBudget: this.options.devicePageReadBudget };
    const membersOf = (groupKey: string | undefined) => groupMembers(this.models, groupId, groupKey);
    if (Object.keys(equality).length === 1 && search === undefined) {
      const read = await readDevicePage<PagedId>({ ...common, find: async (groupKey) => (await membersOf(groupKey)).map((_id) => ({ _id })) });
      this.options.onDevicePageRead?.(read.read);
      // A member whose device was deleted a moment ago (its memberships go after it) is left out.
      const devices = await this.devicesWithGroups(projectId, read.docs.map((doc) => doc._id));
      return { devices, total: read.total, nextAfterId: read.nextAfterId };
    }
    const read = await readDevicePage<DeviceDoc>({
      ...common,
      find: async (groupKey) => this.devicesByKey(projectId, await membersOf(groupKey)),
      keep: (doc) => matchesEquality(doc, equality) && (!search || doc.device_id.toLowerCase().includes(search)),
    });
    this.options.onDevicePageRead?.(read.read);
    return { devices: await this.withGroups(projectId, read.docs), total: read.total, nextAfterId: read.nextAfterId };
  }

  async countChipFamilies(projectId: string): Promise<{ counts: CountsById; estimated: boolean }> {
    return countSampledBy(await this.sampleCounted(projectId), (doc) => doc.chip_family ?? '');
  }

  async countCurrentHashes(projectId: string): Promise<{ counts: CountsById; estimated: boolean }> {
    return countSampledBy(await this.sampleDeviceDocs(projectId), (doc) => doc.current_hash ?? '');
  }

  /**
   * A sample of the project's devices' channels and chip families. A large project's is read from
   * the devices' profiles, whose documents FerretDB decodes at a fraction of a device's: from a few
   * of their finest buckets (PROFILE_COUNT_BUCKET_LEVEL, about 244 devices each at a million), else
   * from their coarser ones (PROFILE_BUCKET_LEVEL), whichever first makes the sample in a few reads
   * (docs/performance.md, "Counts from the finer profile buckets"). Where neither does (a project
   * of fewer than about 8,000 devices), the devices' own buckets serve.
   */
  private async sampleCounted(projectId: string): Promise<DeviceSample<ProfileCounted | CountedDoc>> {
    for (const level of [PROFILE_COUNT_BUCKET_LEVEL, PROFILE_BUCKET_LEVEL] as const) {
      const sample = await sampleBuckets(projectId, (bucket) => this.profiles.countedIn(level, bucket), this.options.countSample, level);
      if (sample) return sample;
    }
    return this.sampleDeviceDocs(projectId);
  }

  /** A sample of the project's devices from their own page buckets, with the fields a count looks at. */
  private sampleDeviceDocs(projectId: string): Promise<DeviceSample<CountedDoc>> {
    return sampleDevices(projectId, (pageKey) => this.findCounted(projectId, pageKey), this.options.countSample);
  }

  /** The fields a count looks at, of the project's devices or of one page bucket, with `equality` matched by the store. */
  private findCounted(projectId: string, pageKey: string | undefined, equality: Record<string, unknown> = {}, limit = 0): Promise<CountedDoc[]> {
    const query = { project_id: projectId, ...equality, ...(pageKey ? { page_keys: pageKey } : {}) };
    return this.models.Device.find(query, { channel_id: 1, chip_family: 1, current_hash: 1 }).limit(limit).lean<CountedDoc[]>().exec();
  }

  /**
   * Devices per value (a channel, a group) for the values named: from a sample of the project (its
   * devices, its memberships), and, for a value the sample saw too seldom to scale up, by an exact
   * count when it is small.
   */
  private async countPerValue<Doc>(
    sampling: Promise<DeviceSample<Doc>>,
    values: readonly string[],
    valueOf: (doc: Doc) => string,
    countUpTo: (value: string, cap: number) => Promise<number>,
  ): Promise<CountsPerId> {
    const sample = await sampling;
    const seen = new Map<string, number>();
    for (const doc of sample.docs) seen.set(valueOf(doc), (seen.get(valueOf(doc)) ?? 0) + 1);
    const counts: CountsById = new Map();
    const estimated = new Set<string>();
    for (const value of values) {
      const inSample = seen.get(value) ?? 0;
      if (sample.share === 1) {
        counts.set(value, inSample);
        continue;
      }
      const exact = inSample < SEEN_ENOUGH_TO_SCALE ? await countUpTo(value, EXACT_COUNT_UP_TO + 1) : undefined;
      if (exact !== undefined && exact <= EXACT_COUNT_UP_TO) counts.set(value, exact);
      else {
        counts.set(value, countFromSample(sample, inSample).count);
        estimated.add(value);
      }
    }
    return { counts, estimated };
  }

  streamFleet(projectId: string, pageSize: number, idPrefix: string, groups: FleetGroups): AsyncIterable<FleetDevice[]> {
    return this.profiles.stream(projectId, idPrefix, pageSize, groups);
  }

  async countDevices(projectId: string, targets: DeviceTargets = { groupIds: [], channelIds: [] }, atMost?: number): Promise<DeviceCount> {
    const reached = this.reachedIn(projectId, targets);
    if (atMost) return { count: await this.countAtMost(projectId, reached, atMost), estimated: false };
    // Where the store matches every target, every device read counts: a quarter of the sample (about
    // 6% off) counts closer than the whole sample counts a tenth of the fleet unfiltered (about 10%),
    // at a quarter of the reads. Where some targets are left to the filter here, fewer of the devices
    // read count, and the whole sample is read.
    const storeMatchesAll = targets.groupIds.length > 0 ? targets.channelIds.length <= 1 : targets.channelIds.length === 1;
    const sampleSize = storeMatchesAll ? Math.ceil(this.options.countSample / MATCHED_SAMPLE_DIVISOR) : this.options.countSample;
    const sample = await sampleDevices(projectId, reached, sampleSize);
    return countFromSample(sample, sample.docs.length);
  }

  /**
   * The devices a deployment with `targets` reaches (docs/api.md, "Targeting") in one page bucket
   * of the project, or in all of it. Of a deployment to groups: the members of any of its groups in
   * the same bucket of each group (`group_keys`), then, with channels, those of the bucket's devices
   * in a targeted channel. Otherwise the bucket's devices, one channel matched by the store.
   */
  private reachedIn(projectId: string, targets: DeviceTargets): (pageKey: string | undefined) => Promise<PagedId[]> {
    const channels = new Set(targets.channelIds);
    const equality = targets.channelIds.length === 1 ? { channel_id: targets.channelIds[0] } : {};
    const inChannel = (doc: CountedDoc) => channels.size === 0 || channels.has(doc.channel_id);
    if (targets.groupIds.length === 0) return async (pageKey) => (await this.findCounted(projectId, pageKey, equality)).filter(inChannel);
    return async (pageKey) => {
      // The bucket's prefix, after `<project>/` (devicePageKey).
      const prefix = pageKey?.slice(projectId.length + 1);
      const memberships = await Promise.all(targets.groupIds.map((groupId) => groupMembers(this.models, groupId, prefix === undefined ? undefined : devicePageKey(groupId, prefix))));
      const members = [...new Set(memberships.flat())];
      if (channels.size === 0) return members.map((_id) => ({ _id }));
      // Within a bucket, the bucket's devices of the channel are one read; across the whole
      // project (a small group, read whole), the members one by one.
      const devices = pageKey
        ? await this.findCounted(projectId, pageKey, equality)
        : await findEach(collectionOf(this.models.Device), '_id', members, { alsoMatching: { project_id: projectId }, projection: { channel_id: 1 } });
      const isMember = new Set(members);
      return devices.filter((doc) => isMember.has(doc._id) && inChannel(doc as CountedDoc)).map((doc) => ({ _id: doc._id }));
    };
  }

  /**
   * Counts up to `atMost`: the buckets of one corner of the id space first, finest first, so that a
   * large project answers from a few hundred devices; all of them only when the corner holds fewer.
   */
  private async countAtMost(projectId: string, reached: (pageKey: string | undefined) => Promise<PagedId[]>, atMost: number): Promise<number> {
    for (let level = DEVICE_PAGE_LEVELS; level >= 1; level -= 1) {
      if ((await reached(devicePageKey(projectId, '0'.repeat(level)))).length >= atMost) return atMost;
    }
    return Math.min(atMost, (await reached(undefined)).length);
  }

  async deleteDevice(projectId: string, id: string, ownerId: string): Promise<boolean> {
    const doc = await this.findDeviceDoc(projectId, { id });
    if (!doc) return false;
    await this.models.Device.deleteOne({ _id: id });
    await this.profiles.remove(id);
    await this.models.Membership.deleteMany({ device_id: id });
    await this.models.DecisionRecord.deleteMany({ device_id: id });
    await this.releaseDevicePlace(ownerId, doc.place);
    return true;
  }

  async findDevice(projectId: string, key: { id: string } | { deviceId: string }): Promise<Device | null> {
    const id = 'id' in key ? key.id : deviceUuid(projectId, key.deviceId);
    const [doc, groupIds] = await Promise.all([this.findDeviceDoc(projectId, key), this.groupIdsOf(id)]);
    return doc ? deviceOf(doc, groupIds) : null;
  }

  // A device_id maps to the primary key (see deviceUuid), so every device read is a primary-key
  // read; the project is checked here rather than in the filter. Every check makes it, so it goes
  // to the driver's collection, as the device write does, without building a mongoose query.
  private async findDeviceDoc(projectId: string, key: { id: string } | { deviceId: string }): Promise<DeviceDoc | null> {
    const id = 'id' in key ? key.id : deviceUuid(projectId, key.deviceId);
    const doc = (await collectionOf(this.models.Device).findOne({ _id: id }, { projection: DEVICE_FIELDS })) as DeviceDoc | null;
    return doc && doc.project_id === projectId && ('id' in key || doc.device_id === key.deviceId) ? doc : null;
  }

  private async releaseDevicePlace(ownerId: string, place: number | undefined): Promise<void> {
    if (!place) return;
    await releasePlace(collectionOf(this.models.DevicePlace), ownerId, place);
    this.ownersAtCap.forget(ownerId);
  }

  /**
   * Every update of a device document goes through here: one at a time per device (see
   * PerKeyQueue).
   */
  private writeDevice(id: string, fields: Partial<DeviceDoc> | Record<string, unknown>): Promise<unknown> {
    return this.deviceWrites.run(id, () => collectionOf(this.models.Device).updateOne({ _id: id }, { $set: fields }));
  }

  async registerDevice(
    device: Device,
    ownerId: string,
    maxDevices: number,
    by: Registration = 'provisioning',
  ): Promise<{ device: Device; created: boolean } | 'over_limit'> {
    // Take one of the owner's numbered device places first: two registrations can never hold the
    // same place, so together they can never exceed the cap. A device's check is refused from
    // memory while this replica remembers its owner at the cap (owners-at-cap.ts).
    const take = () => takePlace(collectionOf(this.models.DevicePlace), ownerId, maxDevices);
    const place = by === 'check' && maxDevices > 0 ? await this.ownersAtCap.takeForCheck(ownerId, maxDevices, take) : await this.takeWithoutWaiting(ownerId, maxDevices, take);
    if (place === null) {
      // A concurrent first check of this same device may have registered it meanwhile.
      const existing = await this.findDevice(device.projectId, { deviceId: device.deviceId });
      return existing ? { device: existing, created: false } : 'over_limit';
    }
    try {
      const doc = docOf(device, place);
      await collectionOf(this.models.Device).insertOne(doc);
      await this.profiles.refresh(device.id, doc);
      return { device, created: true };
    } catch (error) {
      await this.releaseDevicePlace(ownerId, place);
      if (!isDuplicateKey(error)) throw error;
      const existing = await this.findDevice(device.projectId, { deviceId: device.deviceId });
      if (!existing) throw error;
      return { device: existing, created: false };
    }
  }

  /**
   * A person's pre-provisioning, and any uncapped take: no wait for other takes and no memory
   * consulted (provisioning always reads); a cap found reached refuses devices' checks too.
   */
  private async takeWithoutWaiting(ownerId: string, maxDevices: number, take: () => Promise<number | null>): Promise<number | null> {
    const started = performance.now();
    const place = await take();
    if (place === null && maxDevices > 0) this.ownersAtCap.found(ownerId, maxDevices, performance.now() - started);
    return place;
  }

  async checkIn(checkIn: CheckIn): Promise<Device | null> {
    const id = deviceUuid(checkIn.projectId, checkIn.deviceId);
    const device = { _id: id, project_id: checkIn.projectId, device_id: checkIn.deviceId };
    // The filter is the heartbeat rule (heartbeat-rule.ts): a device that may not have one fails
    // it, and is counted by the second write without the heartbeat. Only _id is pushed down on
    // FerretDB. No projection: FerretDB v1 refuses `fields` on findAndModify, and deviceOf reads
    // no history. Every check builds these: a spread comes last or not at all, as V8 builds an
    // object with properties after a spread through its runtime (docs/performance.md, "Objects
    // built without a spread before their properties").
    const mayHeartbeat = { _id: id, project_id: checkIn.projectId, device_id: checkIn.deviceId, ...heartbeatFilter(checkIn.viaProjectToken) };
    const counted = (filter: object, set: Partial<DeviceDoc>) =>
      this.deviceWrites.run(id, () =>
        collectionOf(this.models.Device).findOneAndUpdate(filter, { $set: set, $inc: { check_count: 1 } }, { returnDocument: 'before' }),
      ) as Promise<DeviceDoc | null>;
    const heartbeat = heartbeatFields(checkIn.reported, checkIn.at);
    heartbeat.last_check_at = checkIn.at;
    if (checkIn.health) heartbeat.health = healthDocOf(checkIn.health);
    const before = await counted(mayHeartbeat, heartbeat);
    if (before) {
      // A check rarely changes what a preview decides on: only then is the profile written.
      if (changedProfile(before, heartbeat)) await this.profiles.refresh(id, { ...before, ...heartbeat });
      // No groups: a check reads them only when a deployment asks for them (ports.ts, checkIn).
      return deviceOf(before, []);
    }
    const refused = await counted(device, { last_check_at: checkIn.at });
    return refused ? deviceOf(refused, []) : null;
  }

  async groupIdsOf(deviceUuid: string): Promise<string[]> {
    const memberships = await this.models.Membership.find({ device_id: deviceUuid }, { group_id: 1 }).lean<MembershipDoc[]>();
    return memberships.map((membership) => membership.group_id).sort();
  }

  async recordCheck(record: DecisionRecordWrite): Promise<void> {
    await collectionOf(this.models.DecisionRecord).insertOne(decisionRecordDoc(record.id, record.seq, record.record));
    if (record.record.status !== record.previousStatus) await this.writeDevice(record.id, { last_check_status: record.record.status });
  }

  // PREVIOUS RELEASE: the release before's RecordCheck (previous-release/three-call-check.ts).
  async recordWholeCheck(record: WholeCheckWrite): Promise<void> {
    const { record: event } = record;
    await this.writeDevice(record.id, {
      ...(record.reported ? heartbeatFields(record.reported, event.createdAt) : {}),
      last_check_at: event.createdAt,
      last_check_status: event.status,
      check_count: record.checkCount + 1,
    });
    if (record.reported) await this.profiles.refresh(record.id);
    await collectionOf(this.models.DecisionRecord).insertOne(decisionRecordDoc(record.id, record.checkCount + 1, event));
  }

  async trimDecisionRecords(id: string, throughSeq: number): Promise<void> {
    await collectionOf(this.models.DecisionRecord).deleteMany({ device_id: id, seq: { $lte: throughSeq } });
  }

  async listDecisionRecords(projectId: string, id: string): Promise<DecisionRecord[]> {
    // The device is read for its project, and (PREVIOUS RELEASE: the release after this one
    // removes them) for the history slots the releases before wrote on it.
    const [doc, records] = await Promise.all([
      this.models.Device.findById(id, { project_id: 1, device_id: 1, check_history: 1 }).lean<Pick<DeviceDoc, 'project_id' | 'device_id' | 'check_history'>>(),
      collectionOf(this.models.DecisionRecord).find({ device_id: id }).toArray(),
    ]);
    if (!doc || doc.project_id !== projectId) return [];
    const entries = new Map<string, DecisionRecordEntry>();
    for (const stored of [...records.map((record) => record.entry), ...Object.values(doc.check_history ?? {})]) {
      const entry = decodeDecisionRecordEntry(stored);
      entries.set(entry.id, entry);
    }
    return [...entries.values()]
      .sort((a, b) => b.seq - a.seq || b.created_at.getTime() - a.created_at.getTime() || b.id.localeCompare(a.id))
      .map((entry) => ({
        id: entry.id,
        projectId: doc.project_id,
        deviceId: doc.device_id,
        createdAt: entry.created_at,
        decision: entry.decision,
        status: entry.status,
        deploymentId: entry.deployment_id,
        artifactBuildNumber: entry.artifact_build_number ?? null,
        reportedBuildNumber: entry.reported_build_number ?? null,
        reportedVersion: entry.reported_version ?? '',
        message: entry.message ?? '',
      }));
  }

  async updateDevice(projectId: string, id: string, set: Partial<Device>): Promise<Device | null> {
    const fields = changedFields(set);
    const doc = await this.findDeviceDoc(projectId, { id });
    if (!doc) return null;
    await this.writeDevice(id, fields);
    if (changesProfile(fields)) await this.profiles.refresh(id, { ...doc, ...fields });
    return deviceOf({ ...doc, ...fields }, await this.groupIdsOf(id));
  }

  async deferOffer(id: string, deferral: Deferral): Promise<void> {
    await this.writeDevice(id, { deferral: { deployment_id: deferral.deploymentId, until: deferral.until } });
  }

  async applyStatusReport(id: string, write: StatusReportWrite): Promise<boolean> {
    // The filter is the whole rule, so nothing is read: the device of this project, not one with
    // its own token when the project token reported, and a status no lower than the stored one of
    // the same deployment. Only _id is pushed down to the store's index on FerretDB; the rest is
    // judged on that one document.
    const filter = {
      _id: id,
      project_id: write.projectId,
      ...(write.viaProjectToken ? { token_required: { $ne: true } } : {}),
      $or: [{ last_ota_deployment_id: { $ne: write.deploymentId } }, { last_ota_rank: { $lte: write.rank } }],
    };
    const set = { ...changedFields(write.change), last_ota_deployment_id: write.deploymentId, last_ota_rank: write.rank };
    if (write.change.currentBuildNumber === undefined) {
      const result = await this.deviceWrites.run(id, () => collectionOf(this.models.Device).updateOne(filter, { $set: set }));
      return result.matchedCount > 0;
    }
    // A confirm sets the device's build, which its profile holds: the write answers the document
    // it left, from which the profile is written.
    const after = (await this.deviceWrites.run(id, () => collectionOf(this.models.Device).findOneAndUpdate(filter, { $set: set }, { returnDocument: 'after' }))) as DeviceDoc | null;
    if (after) await this.profiles.refresh(id, after);
    return after !== null;
  }

  // PREVIOUS RELEASE: the release before's ApplyDeviceReport (previous-release/handlers.ts).
  async applyDeviceReport(projectId: string, id: string, set: Partial<Device>): Promise<boolean> {
    // The project in the filter keeps a report within its project; matchedCount says whether the device exists.
    const result = await this.deviceWrites.run(id, () =>
      collectionOf(this.models.Device).updateOne({ _id: id, project_id: projectId }, { $set: changedFields(set) }),
    );
    if (result.matchedCount > 0 && changesProfile(changedFields(set))) await this.profiles.refresh(id);
    return result.matchedCount > 0;
  }
}

/** Devices per value of a field, from a sample of the project (exact when it is the whole project). */
function countSampledBy<Doc>(sample: DeviceSample<Doc>, valueOf: (doc: Doc) => string): { counts: CountsById; estimated: boolean } {
  const kept = new Map<string, number>();
  for (const doc of sample.docs) kept.set(valueOf(doc), (kept.get(valueOf(doc)) ?? 0) + 1);
  return { counts: new Map([...kept].map(([value, count]) => [value, countFromSample(sample, count).count])), estimated: sample.share < 1 };
}

/** Each device of `docs` with the groups `memberships` give it, sorted. */
function joinGroups(docs: readonly DeviceDoc[], memberships: ReadonlyArray<Pick<MembershipDoc, 'device_id' | 'group_id'>>): Device[] {
  const groupsOf = new Map<string, string[]>();
  for (const { device_id, group_id } of memberships) groupsOf.set(device_id, [...(groupsOf.get(device_id) ?? []), group_id]);
  return docs.map((doc) => deviceOf(doc, (groupsOf.get(doc._id) ?? []).sort()));
}

/** The most page buckets whose memberships a list's devices are read from (withGroups). */
const MEMBERSHIP_BUCKETS_READ = 4;
/**
 * The most memberships a page bucket may hold per device of the page in it for the page's other
 * buckets to be read whole (withGroups). At a million devices, the project's finest buckets hold
 * about 244: a page of the project (about 5 per device, one bucket) paid reading it, against one
 * read per device's key, and a page of a group spread over three buckets (about 14) did not
 * (docs/performance.md, "No copy of the groups on the device").
 */
const MEMBERSHIPS_READ_PER_DEVICE = 8;

/**
 * The finest page buckets `ids` fall in, the one holding most of them first, when they are
 * MEMBERSHIP_BUCKETS_READ or fewer. Only the finest: a coarser bucket of a large project holds far
 * more devices than a page (a sixteenth of a million), and devices of a page spread over it would
 * cost more than their keys.
 */
function bucketsSpanned(ids: readonly string[]): Array<{ prefix: string; ids: string[] }> | undefined {
  const byPrefix = new Map<string, string[]>();
  for (const id of ids) {
    const prefix = id.slice(0, DEVICE_PAGE_LEVELS);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), id]);
  }
  if (byPrefix.size > MEMBERSHIP_BUCKETS_READ) return undefined;
  return [...byPrefix].map(([prefix, inIt]) => ({ prefix, ids: inIt })).sort((a, b) => b.ids.length - a.ids.length);
}

/** A value seen this many times in a sample is scaled up (off by about 18%); one seen fewer times is counted exactly if small. */
const SEEN_ENOUGH_TO_SCALE = 32;
/**
 * The most devices of one value counted one by one (FerretDB stops decoding there, though
 * PostgreSQL still hands over every match); more are estimated from the sample.
 */
const EXACT_COUNT_UP_TO = 1_000;

type CountedDoc = Pick<DeviceDoc, '_id' | 'channel_id' | 'chip_family' | 'current_hash'>;
/** A device counted by its UUID alone. */
type PagedId = Pick<DeviceDoc, '_id'>;
/** What a text search reads of each device of a bucket. */
type SearchedDoc = Pick<DeviceDoc, '_id' | 'device_id'>;

/**
 * The UUIDs of a group's members in its page bucket `groupKey` (models.ts, `group_keys`), or of all
 * of them: a filter on the group too would let PostgreSQL read every member of the group.
 */
export async function groupMembers(models: RegistryModels, groupId: string, groupKey?: string): Promise<string[]> {
  const members = await findAll<Pick<MembershipDoc, 'device_id'>>(models.Membership, groupKey ? { group_keys: groupKey } : { group_id: groupId }, { projection: { device_id: 1 } });
  return members.map((member) => member.device_id);
}

/** Inserts the memberships that do not exist yet; answers how many did not. */
export async function insertMemberships(models: RegistryModels, docs: MembershipDoc[]): Promise<number> {
  try {
    return (await collectionOf(models.Membership).insertMany(docs, { ordered: false })).insertedCount;
  } catch (error) {
    // Unordered: every document that is not a duplicate went in; the error counts them.
    const failure = error as { insertedCount?: number; result?: { insertedCount?: number }; writeErrors?: Array<{ code?: number }> | { code?: number } };
    const writeErrors = Array.isArray(failure.writeErrors) ? failure.writeErrors : failure.writeErrors ? [failure.writeErrors] : [];
    if (writeErrors.length === 0 || !writeErrors.every((writeError) => writeError.code === 11000)) throw error;
    return failure.insertedCount ?? failure.result?.insertedCount ?? 0;
  }
}

/** `text` matched literally inside a $regex. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The order of two ASCII strings (device ids and UUIDs) as the store sorts them: by code, not by locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
