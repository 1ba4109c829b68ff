import type { ArtifactChangedEvent } from '@ota/bus';
import type { ServiceClient } from '@ota/grpc';
import { requirementsIn, requirementsOf } from '@ota/manifest';
import { type artifacts as pb } from '@ota/proto';
import type { ArtifactSummary } from '../domain/model';
import type { ArtifactCatalog } from '../domain/ports';

type ArtifactsClient = ServiceClient<typeof pb.ArtifactsServiceService>;

export class GrpcArtifactCatalog implements ArtifactCatalog {
  constructor(private readonly client: ArtifactsClient) {}

  async getArtifact(projectId: string, artifactId: string, requestId: string): Promise<ArtifactSummary> {
    const { artifact } = await this.client.getArtifact({ projectId, artifactId }, { requestId });
    return summaryOfMessage(artifact!);
  }

  async listAll(): Promise<ArtifactSummary[]> {
    const { artifacts } = await this.client.listArtifacts({ projectId: '' });
    return artifacts.map(summaryOfMessage);
  }
}

export function summaryOfMessage(artifact: pb.Artifact): ArtifactSummary {
  return {
    id: artifact.id,
    projectId: artifact.projectId,
    buildNumber: artifact.buildNumber,
    versionLabel: artifact.versionLabel,
    ...requirementsIn(artifact),
    checksumSha256: artifact.checksumSha256,
    fileSize: artifact.fileSize,
    archived: artifact.archived,
    signature: artifact.signature,
    signingKeyId: artifact.signingKeyId,
  };
}

export function summaryOfEvent(event: ArtifactChangedEvent): ArtifactSummary {
  return {
    id: event.id,
    projectId: event.project_id,
    buildNumber: event.build_number,
    versionLabel: event.version_label,
    ...requirementsOf(event),
    checksumSha256: event.checksum_sha256,
    fileSize: event.file_size,
    archived: event.archived,
    signature: event.signature,
    signingKeyId: event.signing_key_id,
  };
}
