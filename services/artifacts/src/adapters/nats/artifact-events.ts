import { SUBJECTS, type ArtifactChangedEvent, type Bus } from '@ota/bus';
import { requirementFields } from '@ota/manifest';
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
    ...requirementFields(artifact),
    checksum_sha256: artifact.checksumSha256,
    file_size: artifact.fileSize,
    archived: artifact.archived,
    signature: artifact.signature,
    signing_key_id: artifact.signingKeyId,
    created_at: artifact.createdAt.toISOString(),
  };
}
