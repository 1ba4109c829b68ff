import { collectionOf, insertUnique, isDuplicateKey } from '@ota/mongo';
import type { Patch, PatchState } from '../../domain/model';
import type { PatchOutcome, PatchStore } from '../../domain/ports';
import type { ArtifactModels, PatchDoc } from './models';

/** Waiting jobs one claim looks at: enough that racing workers each find one of their own. */
const CLAIM_CANDIDATES = 16;

export class MongoPatchStore implements PatchStore {
  constructor(private readonly models: ArtifactModels) {}

  async insertPatchJob(patch: Patch): Promise<Patch> {
    try {
      await collectionOf(this.models.Patch).insertOne(docOf(patch));
      return patch;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const existing = await this.findPatch(patch.id);
      if (!existing) throw error;
      return existing;
    }
  }

  async findPatch(id: string): Promise<Patch | null> {
    const doc = await this.models.Patch.findById(id).lean<PatchDoc>();
    return doc ? patchOf(doc) : null;
  }

  async listPatches(projectId: string, targetArtifactId: string): Promise<Patch[]> {
    const docs = await this.models.Patch.find({ project_id: projectId, target_artifact_id: targetArtifactId }).sort({ created_at: 1, _id: 1 }).lean<PatchDoc[]>();
    return docs.map(patchOf);
  }

  async claimPatchJob(now: Date, leaseUntil: Date): Promise<Patch | null> {
    const waiting = await this.models.Patch.find({ $or: [{ state: 'queued' }, { state: 'building', lease_until: { $lt: now } }] })
      .sort({ created_at: 1, _id: 1 })
      .limit(CLAIM_CANDIDATES)
      .lean<PatchDoc[]>();
    for (const doc of waiting) {
      // Of the workers that read this job in this state, the one whose claim of its next attempt
      // goes in first has it; the others find the claim taken and look at the next job.
      const attempts = doc.attempts + 1;
      if (!(await insertUnique(collectionOf(this.models.PatchClaim), { _id: `${doc._id}#${attempts}`, claimed_at: now }))) continue;
      await collectionOf(this.models.Patch).updateOne({ _id: doc._id }, { $set: { state: 'building', attempts, lease_until: leaseUntil, updated_at: now } });
      return patchOf({ ...doc, state: 'building', attempts, lease_until: leaseUntil, updated_at: now });
    }
    return null;
  }

  async finishPatchJob(id: string, outcome: PatchOutcome, now: Date): Promise<void> {
    const fields = outcome.state === 'ready' ? { state: 'ready', size: outcome.size, sha256: outcome.sha256, reason: '' } : { state: 'failed', reason: outcome.reason };
    await collectionOf(this.models.Patch).updateOne({ _id: id }, { $set: { ...fields, lease_until: null, updated_at: now } });
  }
}

function docOf(patch: Patch): PatchDoc {
  return {
    _id: patch.id,
    project_id: patch.projectId,
    base_artifact_id: patch.baseArtifactId,
    target_artifact_id: patch.targetArtifactId,
    base_sha256: patch.baseSha256,
    target_sha256: patch.targetSha256,
    format: patch.format,
    state: patch.state,
    reason: patch.reason,
    size: patch.size,
    sha256: patch.sha256,
    storage_key: patch.storageKey,
    attempts: patch.attempts,
    created_at: patch.createdAt,
    updated_at: patch.updatedAt,
    lease_until: patch.leaseUntil,
  };
}

function patchOf(doc: PatchDoc): Patch {
  return {
    id: doc._id,
    projectId: doc.project_id,
    baseArtifactId: doc.base_artifact_id,
    targetArtifactId: doc.target_artifact_id,
    baseSha256: doc.base_sha256,
    targetSha256: doc.target_sha256,
    format: doc.format,
    state: doc.state as PatchState,
    reason: doc.reason,
    size: doc.size,
    sha256: doc.sha256,
    storageKey: doc.storage_key,
    attempts: doc.attempts,
    createdAt: doc.created_at,
    updatedAt: doc.updated_at,
    leaseUntil: doc.lease_until,
  };
}
