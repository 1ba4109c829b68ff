import { collectionOf, insertUnique, isDuplicateKey } from '@ota/mongo';
import type { CoreDumpUpload, Crash, CrashGroup, CrashGroupSummary } from '../../domain/crash-model';
import type { CrashFilter, CrashStore } from '../../domain/ports';
import type { ArtifactModels, CoreDumpPieceDoc, CrashDoc, CrashGroupDoc } from './models';

/** Queued crashes one claim looks at: enough that racing workers each find one of their own. */
const CLAIM_CANDIDATES = 16;

/**
 * Crashes, their groups and dumps in transit. Nothing here is a counter: FerretDB v1 runs an
 * update as read-then-write (docs/architecture.md), so a group's count and devices are counted
 * from its crashes when read, and what concurrency decides (a piece's offset, a decode's worker)
 * is decided by an insert against a unique `_id`.
 */
export class MongoCrashStore implements CrashStore {
  constructor(private readonly models: ArtifactModels) {}

  async openUpload(upload: CoreDumpUpload): Promise<CoreDumpUpload> {
    await insertUnique(collectionOf(this.models.CoreDumpUpload), {
      _id: upload.id,
      project_id: upload.projectId,
      device_id: upload.deviceId,
      sha256: upload.sha256,
      size: upload.size,
      created_at: upload.createdAt,
    });
    const doc = await this.models.CoreDumpUpload.findById(upload.id).lean();
    if (!doc) return upload;
    return { id: doc._id, projectId: doc.project_id, deviceId: doc.device_id, sha256: doc.sha256, size: doc.size, createdAt: doc.created_at };
  }

  async addPiece(uploadId: string, offset: number, piece: Buffer): Promise<number> {
    await insertUnique(collectionOf(this.models.CoreDumpPiece), { _id: `${uploadId}@${offset}`, upload_id: uploadId, offset, size: piece.length, data: piece });
    return this.receivedOf(uploadId);
  }

  async receivedOf(uploadId: string): Promise<number> {
    const pieces = await this.models.CoreDumpPiece.find({ upload_id: uploadId }, { offset: 1, size: 1 }).sort({ offset: 1 }).lean<Pick<CoreDumpPieceDoc, 'offset' | 'size'>[]>();
    let received = 0;
    for (const piece of pieces) {
      if (piece.offset !== received) break;
      received += piece.size;
    }
    return received;
  }

  async piecesOf(uploadId: string): Promise<Buffer> {
    const pieces = await this.models.CoreDumpPiece.find({ upload_id: uploadId }).sort({ offset: 1 }).lean<CoreDumpPieceDoc[]>();
    const joined: Buffer[] = [];
    let received = 0;
    for (const piece of pieces) {
      if (piece.offset !== received) break;
      const data = Buffer.from((piece.data as unknown as { buffer?: Uint8Array }).buffer ?? piece.data);
      joined.push(data);
      received += data.length;
    }
    return Buffer.concat(joined);
  }

  async dropUpload(uploadId: string): Promise<void> {
    await this.models.CoreDumpPiece.deleteMany({ upload_id: uploadId });
    await this.models.CoreDumpUpload.deleteOne({ _id: uploadId });
  }

  async dropUploadsStartedBefore(before: Date): Promise<number> {
    const stale = await this.models.CoreDumpUpload.find({ created_at: { $lt: before } }, { _id: 1 }).limit(1000).lean();
    for (const upload of stale) await this.dropUpload(upload._id);
    return stale.length;
  }

  async insertCrash(crash: Crash): Promise<'inserted' | 'duplicate'> {
    try {
      await collectionOf(this.models.Crash).insertOne(docOf(crash));
      return 'inserted';
    } catch (error) {
      if (isDuplicateKey(error)) return 'duplicate';
      throw error;
    }
  }

  async findCrashByDump(projectId: string, deviceId: string, sha256: string): Promise<Crash | null> {
    const doc = await this.models.Crash.findOne({ project_id: projectId, device_id: deviceId, sha256 }).lean<CrashDoc>();
    return doc ? crashOf(doc) : null;
  }

  countCrashesSince(projectId: string, deviceId: string, since: Date): Promise<number> {
    return this.models.Crash.countDocuments({ project_id: projectId, device_id: deviceId, received_at: { $gte: since } });
  }

  async claimDecode(now: Date, leaseUntil: Date): Promise<Crash | null> {
    const waiting = await this.models.Crash.find({ $or: [{ decoding: 'queued', lease_until: null }, { decoding: 'queued', lease_until: { $lt: now } }] })
      .sort({ received_at: 1, _id: 1 })
      .limit(CLAIM_CANDIDATES)
      .lean<CrashDoc[]>();
    for (const doc of waiting) {
      const attempts = doc.attempts + 1;
      if (!(await insertUnique(collectionOf(this.models.CrashDecodeClaim), { _id: `${doc._id}#${attempts}`, claimed_at: now }))) continue;
      await collectionOf(this.models.Crash).updateOne({ _id: doc._id }, { $set: { attempts, lease_until: leaseUntil } });
      return crashOf({ ...doc, attempts, lease_until: leaseUntil });
    }
    return null;
  }

  async finishDecode(crash: Crash): Promise<void> {
    const doc = docOf(crash);
    await collectionOf(this.models.Crash).updateOne(
      { _id: crash.id },
      { $set: { task: doc.task, frames: doc.frames, decoding: doc.decoding, decoding_note: doc.decoding_note, needs_elf: doc.needs_elf, group_id: doc.group_id, lease_until: null } },
    );
  }

  async requeueForElf(projectId: string, artifactId: string): Promise<number> {
    const result = await collectionOf(this.models.Crash).updateMany(
      { project_id: projectId, artifact_id: artifactId, needs_elf: true },
      { $set: { decoding: 'queued', needs_elf: false, lease_until: null } },
    );
    return result.modifiedCount;
  }

  async insertGroup(group: CrashGroup): Promise<void> {
    await insertUnique(collectionOf(this.models.CrashGroup), {
      _id: group.id,
      project_id: group.projectId,
      artifact_id: group.artifactId,
      signature: group.signature,
      reason: group.reason,
      frames: group.frames,
      decoding: group.decoding,
    });
  }

  async findGroup(projectId: string, groupId: string): Promise<CrashGroup | null> {
    const doc = await this.models.CrashGroup.findOne({ _id: groupId, project_id: projectId }).lean<CrashGroupDoc>();
    return doc ? groupOf(doc) : null;
  }

  async listGroups(filter: CrashFilter, limit: number): Promise<CrashGroupSummary[]> {
    const match: Record<string, unknown> = { project_id: filter.projectId, group_id: filter.groupId ?? { $ne: null } };
    if (filter.artifactId) match.artifact_id = filter.artifactId;
    if (filter.since) match.received_at = { $gte: filter.since };
    const crashes = collectionOf(this.models.Crash);
    // $sum is the one accumulator FerretDB v1 has: counts and device pairs, the times found apart.
    const counts = await crashes.aggregate<{ _id: string; count: number }>([{ $match: match }, { $group: { _id: '$group_id', count: { $sum: 1 } } }]).toArray();
    if (counts.length === 0) return [];
    const ids = counts.map((count) => count._id);
    const pairs = await crashes
      .aggregate<{ _id: { group: string } }>([{ $match: { ...match, group_id: { $in: ids } } }, { $group: { _id: { group: '$group_id', device: '$device_id' }, n: { $sum: 1 } } }])
      .toArray();
    const devices = new Map<string, number>();
    for (const pair of pairs) devices.set(pair._id.group, (devices.get(pair._id.group) ?? 0) + 1);
    const groups = await this.models.CrashGroup.find({ _id: { $in: ids }, project_id: filter.projectId }).lean<CrashGroupDoc[]>();
    const summaries = await Promise.all(
      groups.map(async (doc) => {
        const within = { ...match, group_id: doc._id };
        const [first, last] = await Promise.all([
          this.models.Crash.findOne(within, { received_at: 1 }).sort({ received_at: 1 }).lean<CrashDoc>(),
          this.models.Crash.findOne(within, { received_at: 1 }).sort({ received_at: -1 }).lean<CrashDoc>(),
        ]);
        return {
          ...groupOf(doc),
          count: counts.find((count) => count._id === doc._id)?.count ?? 0,
          devices: devices.get(doc._id) ?? 0,
          firstSeen: first?.received_at ?? new Date(0),
          lastSeen: last?.received_at ?? new Date(0),
        };
      }),
    );
    return summaries.sort((a, b) => b.lastSeen.getTime() - a.lastSeen.getTime() || b.count - a.count).slice(0, limit);
  }

  async listCrashesOfGroup(groupId: string, limit: number): Promise<Crash[]> {
    const docs = await this.models.Crash.find({ group_id: groupId }).sort({ received_at: -1 }).limit(limit).lean<CrashDoc[]>();
    return docs.map(crashOf);
  }
}

function docOf(crash: Crash): CrashDoc {
  return {
    _id: crash.id,
    project_id: crash.projectId,
    device_id: crash.deviceId,
    artifact_id: crash.artifactId,
    attribution: crash.attribution,
    sha256: crash.sha256,
    size: crash.size,
    storage_key: crash.storageKey,
    chip: crash.chip,
    format_version: crash.formatVersion,
    elf_sha256_prefix: crash.elfSha256Prefix,
    reason: crash.reason,
    panic_details: crash.panicDetails,
    pc: crash.pc,
    task: crash.task,
    in_interrupt: crash.inInterrupt,
    frames: crash.frames,
    decoding: crash.decoding,
    decoding_note: crash.decodingNote,
    needs_elf: crash.needsElf,
    group_id: crash.groupId,
    received_at: crash.receivedAt,
    attempts: crash.attempts,
    lease_until: crash.leaseUntil,
  };
}

function crashOf(doc: CrashDoc): Crash {
  return {
    id: doc._id,
    projectId: doc.project_id,
    deviceId: doc.device_id,
    artifactId: doc.artifact_id,
    attribution: doc.attribution as Crash['attribution'],
    sha256: doc.sha256,
    size: doc.size,
    storageKey: doc.storage_key,
    chip: doc.chip,
    formatVersion: doc.format_version,
    elfSha256Prefix: doc.elf_sha256_prefix,
    reason: doc.reason,
    panicDetails: doc.panic_details,
    pc: doc.pc ?? null,
    task: doc.task,
    inInterrupt: doc.in_interrupt,
    frames: (doc.frames ?? []).map(frameOf),
    decoding: doc.decoding as Crash['decoding'],
    decodingNote: doc.decoding_note,
    needsElf: doc.needs_elf,
    groupId: doc.group_id ?? null,
    receivedAt: doc.received_at,
    attempts: doc.attempts,
    leaseUntil: doc.lease_until ?? null,
  };
}

function groupOf(doc: CrashGroupDoc): CrashGroup {
  return {
    id: doc._id,
    projectId: doc.project_id,
    artifactId: doc.artifact_id,
    signature: doc.signature,
    reason: doc.reason,
    frames: (doc.frames ?? []).map(frameOf),
    decoding: doc.decoding as CrashGroup['decoding'],
  };
}

const frameOf = (frame: CrashGroupDoc['frames'][number]) => ({ function: frame.function ?? '', file: frame.file ?? '', line: frame.line ?? 0, address: frame.address ?? 0 });
