import type { OutboundCall } from '@ota/logging';
import type { ServiceClient } from '@ota/grpc';
import { type artifacts as pb } from '@ota/proto';
import { summaryOfArtifact, type ArtifactSummary } from '@ota/decision';
import type { ArtifactCatalog } from '../../domain/ports';

type ArtifactsClient = ServiceClient<typeof pb.ArtifactsServiceService>;

export class GrpcArtifactCatalog implements ArtifactCatalog {
  constructor(private readonly client: ArtifactsClient) {}

  async getArtifact(projectId: string, artifactId: string, call: OutboundCall): Promise<ArtifactSummary> {
    const { artifact } = await this.client.getArtifact({ projectId, artifactId }, call);
    return summaryOfArtifact(artifact!);
  }

  async listAll(): Promise<ArtifactSummary[]> {
    const { artifacts } = await this.client.listArtifacts({ projectId: '' });
    return artifacts.map(summaryOfArtifact);
  }
}
