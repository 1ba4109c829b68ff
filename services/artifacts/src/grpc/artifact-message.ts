import { requirementsIn } from '@ota/manifest';
import type { artifacts as pb } from '@ota/proto';
import type { Artifact, ArtifactSbom } from '../domain/model';

/**
 * An artifact as its gRPC message: the answer of the artifacts service's calls, and the body of
 * the `artifactChanged` event, so that rollout reads both with one mapper.
 */
export function artifactMessage(artifact: Artifact): pb.Artifact {
  return {
    id: artifact.id,
    projectId: artifact.projectId,
    buildNumber: artifact.buildNumber,
    versionLabel: artifact.versionLabel,
    ...requirementsIn(artifact),
    minNvsSchemaVersion: artifact.minNvsSchemaVersion ?? undefined,
    releaseNotes: artifact.releaseNotes,
    checksumSha256: artifact.checksumSha256,
    fileSize: artifact.fileSize,
    archived: artifact.archived,
    signature: artifact.signature,
    signingKeyId: artifact.signingKeyId,
    createdAt: artifact.createdAt,
    storageKey: artifact.storageKey,
    image: artifact.image ?? undefined,
    elf: artifact.elf ? { sha256: artifact.elf.sha256, size: artifact.elf.size, uploadedAt: artifact.elf.uploadedAt } : undefined,
    sbom: artifact.sbom ? sbomMessage(artifact.sbom) : undefined,
  };
}

export function sbomMessage(sbom: ArtifactSbom): pb.ArtifactSbom {
  return { sha256: sbom.sha256, size: sbom.size, format: sbom.format, components: sbom.components, uploadedAt: sbom.uploadedAt };
}
