import type { RequestTrace } from '@ota/logging';
import type { ServiceClient } from '@ota/grpc';
import { requirementsIn } from '@ota/manifest';
import { type artifacts as pb } from '@ota/proto';
import type { ArtifactSummary } from '../../domain/model';
import type { ArtifactCatalog } from '../../domain/ports';

type ArtifactsClient = ServiceClient<typeof pb.ArtifactsServiceService>;

export class GrpcArtifactCatalog implements ArtifactCatalog {
  constructor(private readonly client: ArtifactsClient) {}

  async getArtifact(projectId: string, artifactId: string, call: RequestTrace): Promise<ArtifactSummary> {
    const { artifact } = await this.client.getArtifact({ projectId, artifactId }, call);
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
    storageKey: artifact.storageKey,
  };
}
