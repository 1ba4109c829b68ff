import { SUBJECTS, type ArtifactChangedEvent, type Bus } from '@ota/bus';
import type { Artifact } from '../../domain/model';
import type { ArtifactEvents } from '../../domain/ports';

/** Tells rollout's replicas (core NATS) of every new or changed artifact, for their read models. */
export function natsArtifactEvents(bus: Bus): ArtifactEvents {
  return { artifactChanged: (artifact) => bus.publish(SUBJECTS.artifactChanged, artifactChangedEvent(artifact)) };
}

function artifactChangedEvent(artifact: Artifact): ArtifactChangedEvent {
  return {
    id: artifact.id,
    project_id: artifact.projectId,
    build_number: artifact.buildNumber,
    version_label: artifact.versionLabel,
    framework: artifact.framework,
    chip_family: artifact.chipFamily,
    board_id: artifact.boardId,
    hardware_revision: artifact.hardwareRevision,
    partition_profile: artifact.partitionProfile,
    min_nvs_schema_version: artifact.minNvsSchemaVersion,
    security_mode: artifact.securityMode,
    checksum_sha256: artifact.checksumSha256,
    file_size: artifact.fileSize,
    archived: artifact.archived,
    signature: artifact.signature,
    signing_key_id: artifact.signingKeyId,
    created_at: artifact.createdAt.toISOString(),
  };
}
