// Profile packs: the profiles of one finer profile bucket (`k3`) in one document, so that a
// preview of a large project reads a few documents a bucket instead of one a device. FerretDB v1
// spends its CPU per document it hands over (decoding, its collector, resource tracking), about
// ten times as much for a device's profile on its own as for the same profile in a pack
// (docs/architecture.md and docs/performance.md, "Profile packs").
//
// A pack is a cache: the profiles stay the truth, which the release before reads alone. FerretDB
// v1 writes an update by reading the document and writing it back whole, so a conditional update
// is no compare-and-set, and a write to a profile by anyone but its own writer could undo theirs.
// Packs therefore use the one write FerretDB makes atomic, an insert with a unique `_id`:
// - each write of a profile, and each deletion, then inserts a **change** (`device_profile_changes`,
//   an `_id` of its own) naming the device;
// - a pack's versions are documents `<k3>@<v>`: a new version is an insert of the next `_id`, which
//   one writer alone can win; readers take the highest;
// - the invariant: in a finer bucket whose highest version is a pack, a device with no change is in
//   it as its profile is. A reader reads the changes first, then the packs, then the changed
//   devices' profiles (or the finer bucket's whole), and a new version is made of what one read;
//   its maker deletes the changes it read, and only those: a change written after them stays for
//   the next version. Packs read the other way round could miss a change whose pack came between
//   the two reads;
// - a project has packs once it is recorded in `device_profile_packed_projects`, before its first
//   pack: until then its profile writes insert no change and its previews read no pack, and a
//   pack's maker checks the record is there after its insert, so that removing it (with the packs,
//   as the data migration does) cannot leave a pack that no change follows.
import { randomUUID } from 'node:crypto';
import { collectionOf, deleteEachById, findAll, findEach, insertUnique } from '@ota/mongo';
import type { DeviceProfileDoc, ProfileChangeDoc, ProfilePackDoc, RegistryModels } from './models';
import { finerKeyOf, finerKeysOf } from './profile-buckets';

/** A device's UUID with its profile as its JSON array holds it (device-profiles.ts). */
export type ProfileEntry = [id: string, profile: unknown[]];

/**
 * A finer bucket is packed once it holds this many profiles, and its pack made again from the
 * profiles once this many of its devices have changes: below that, reading the changed devices'
 * profiles one by one costs less than reading the bucket's.
 */
export const PACK_AT = 16;

/** The changed devices of a finer bucket that its pack's next version takes in, once read one by one: a fourth of PACK_AT. */
function foldAtFor(packAt: number): number {
  return Math.max(1, Math.floor(packAt / 4));
}

function packIdOf(key: string, version: number): string {
  return `${key}@${version}`;
}

function entriesOf(pack: string): Map<string, unknown[]> {
  return new Map(Object.entries(JSON.parse(pack) as Record<string, unknown[]>));
}

function packOf(entries: Map<string, unknown[]>): string {
  return JSON.stringify(Object.fromEntries(entries));
}

/**
 * The packs that previews make of profiles written together and not changed since, as a seeded
 * store holds them (bench/): version 1 of each finer bucket of at least `packAt` profiles.
 */
export function packDocsOf(profiles: readonly DeviceProfileDoc[], packAt = PACK_AT): ProfilePackDoc[] {
  const byKey = new Map<string, { k: string; entries: Map<string, unknown[]> }>();
  for (const profile of profiles) {
    const key = finerKeyOf(profile.k, profile._id);
    const pack = byKey.get(key) ?? { k: profile.k, entries: new Map() };
    pack.entries.set(profile._id, JSON.parse(profile.p) as unknown[]);
    byKey.set(key, pack);
  }
  return [...byKey].filter(([, pack]) => pack.entries.size >= packAt).map(([key, pack]) => ({ _id: packIdOf(key, 1), k: pack.k, k3: key, v: 1, ps: packOf(pack.entries) }));
}

/** The highest version of each finer bucket's pack among `packs`. */
function newestOf(packs: readonly ProfilePackDoc[]): Map<string, ProfilePackDoc> {
  const newest = new Map<string, ProfilePackDoc>();
  for (const pack of packs) if ((newest.get(pack.k3)?.v ?? -1) < pack.v) newest.set(pack.k3, pack);
  return newest;
}

export class ProfilePacks {
  constructor(
    private readonly models: RegistryModels,
    private readonly packAt = PACK_AT,
  ) {}

  /** Whether the project has packs: a stream asks once, before its first bucket. */
  async isPacked(projectId: string): Promise<boolean> {
    return (await this.models.PackedProject.exists({ _id: projectId })) !== null;
  }

  /**
   * Records that the profile of the device `id`, in the bucket `k`, was written or deleted, in a
   * project with packs. After the write: whoever reads the change reads the profile as written,
   * and a project recorded as packed after this asked has its first pack made from a read of the
   * profiles after that.
   */
  async changed(k: string, id: string): Promise<void> {
    if (!(await this.isPacked(projectOf(k)))) return;
    await collectionOf(this.models.ProfileChange).insertOne({ _id: randomUUID(), k, i: id });
  }

  /**
   * Every profile of the bucket `k`, a part at a time, each as it was at some moment of this read.
   * Reads the bucket's packs and its changed devices' profiles, and reads whole the finer buckets
   * without a pack or with many changes; makes packs and their next versions where that pays.
   */
  async *read(k: string, batchSize: number, packed: boolean): AsyncGenerator<ProfileEntry[]> {
    // The changes before the packs: a device without a change now is in the pack read after it as
    // its profile is now or later, and so is it in a version made from that pack.
    const changes = packed ? await this.changesIn(k) : [];
    const packs = packed ? await this.packsIn(k) : [];
    const newest = newestOf(packs);
    const keys = finerKeysOf(k);
    const changesOf = changesByFinerKey(changes, k);
    const changedIn = (key: string) => new Set(changesOf(key).map((change) => change.i)).size;
    const byId = keys.filter((key) => newest.get(key)?.ps != null && changedIn(key) < this.packAt);
    const whole = keys.filter((key) => !byId.includes(key));

    const changedIds = [...new Set(byId.flatMap((key) => changesOf(key).map((change) => change.i)))];
    const profiles = new Map((await findEach(collectionOf(this.models.DeviceProfile), '_id', changedIds)).map((doc) => [doc._id, doc]));
    for (const key of byId) {
      const pack = newest.get(key)!;
      const entries = entriesOf(pack.ps!);
      for (const { i: id } of changesOf(key)) {
        const profile = profiles.get(id);
        if (profile) entries.set(id, JSON.parse(profile.p) as unknown[]);
        else entries.delete(id);
      }
      yield [...entries];
      if (changedIn(key) >= foldAtFor(this.packAt)) await this.writeVersion(k, key, entries, changesOf(key), packs);
    }

    if (whole.length === 0) return;
    const read = new Map<string, Map<string, unknown[]>>(whole.map((key) => [key, new Map()]));
    const filters = whole.length === keys.length ? [{ k }] : whole.map((key) => ({ k3: key }));
    for (const filter of filters) {
      let part: ProfileEntry[] = [];
      for await (const doc of collectionOf(this.models.DeviceProfile).find(filter, { batchSize })) {
        const profile = JSON.parse(doc.p) as unknown[];
        read.get(finerKeyOf(k, doc._id))?.set(doc._id, profile);
        part.push([doc._id, profile]);
        if (part.length === batchSize) {
          yield part;
          part = [];
        }
      }
      if (part.length > 0) yield part;
    }
    for (const [key, entries] of read) {
      // A pack waiting for this read, or one with many changes: this read came after it.
      if (newest.has(key)) {
        await this.writeVersion(k, key, entries, changesOf(key), packs);
        continue;
      }
      // No pack when the packs were read: a pack made from now on reads the profiles after that,
      // so the changes read before it are of no use to anyone.
      await deleteEachById(
        collectionOf(this.models.ProfileChange),
        changesOf(key).map((change) => change._id),
      );
      if (entries.size >= this.packAt) await this.insertWaiting(k, key);
    }
  }

  /** Deletes the project's record, packs and changes (its buckets are `buckets`), in that order: see the top of this file. */
  async drop(projectId: string, buckets: readonly string[]): Promise<void> {
    await this.models.PackedProject.deleteOne({ _id: projectId });
    for (const k of buckets) await this.models.ProfilePack.deleteMany({ k });
    for (const k of buckets) await this.models.ProfileChange.deleteMany({ k });
  }

  private changesIn(k: string): Promise<ProfileChangeDoc[]> {
    return findAll<ProfileChangeDoc>(this.models.ProfileChange, { k });
  }

  private packsIn(k: string): Promise<ProfilePackDoc[]> {
    return findAll<ProfilePackDoc>(this.models.ProfilePack, { k });
  }

  /** A pack for the next read to fill, version 0: filling it from this read would miss a change written between the read and the insert. */
  private async insertWaiting(k: string, key: string): Promise<void> {
    await insertUnique(collectionOf(this.models.PackedProject), { _id: projectOf(k) });
    await insertUnique(collectionOf(this.models.ProfilePack), { _id: packIdOf(key, 0), k, k3: key, v: 0, ps: null });
  }

  /**
   * Inserts the next version of the finer bucket's pack over the highest of `read`, made of
   * `entries`. Its maker alone deletes the finer bucket's changes it read (`changes`), once it has
   * made sure no higher version was there before it (one whose maker deleted the version below it,
   * which this insert then took), and then the versions below it that were read.
   */
  private async writeVersion(k: string, key: string, entries: Map<string, unknown[]>, changes: readonly ProfileChangeDoc[], read: readonly ProfilePackDoc[]): Promise<void> {
    const older = read.filter((pack) => pack.k3 === key);
    const version = Math.max(...older.map((pack) => pack.v)) + 1;
    const packs = collectionOf(this.models.ProfilePack);
    const id = packIdOf(key, version);
    if (!(await insertUnique(packs, { _id: id, k, k3: key, v: version, ps: packOf(entries) }))) return;
    const highest = Math.max(...(await packs.find({ k3: key }, { projection: { v: 1 } }).toArray()).map((pack) => pack.v));
    if (highest > version || !(await this.isPacked(projectOf(k)))) {
      await packs.deleteOne({ _id: id });
      return;
    }
    await deleteEachById(
      collectionOf(this.models.ProfileChange),
      changes.map((change) => change._id),
    );
    await deleteEachById(
      packs,
      older.map((pack) => pack._id),
    );
  }
}

/** The project of the bucket `k` (devicePageKey in @ota/ids). */
function projectOf(k: string): string {
  return k.slice(0, k.lastIndexOf('/'));
}

/** The changes among `changes`, of the bucket `k`, by finer bucket: read once, asked for several times a bucket. */
function changesByFinerKey(changes: readonly ProfileChangeDoc[], k: string): (key: string) => readonly ProfileChangeDoc[] {
  const byKey = new Map<string, ProfileChangeDoc[]>();
  for (const change of changes) {
    const key = finerKeyOf(k, change.i);
    const ofKey = byKey.get(key) ?? [];
    ofKey.push(change);
    byKey.set(key, ofKey);
  }
  return (key) => byKey.get(key) ?? [];
}
