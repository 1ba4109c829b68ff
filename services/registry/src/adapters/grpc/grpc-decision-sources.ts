import { scheduleOfMessage, summaryOfArtifact, type ArtifactSummary, type DecisionDeployment, type ViewSources } from '@ota/decision';
import { isDomainError } from '@ota/errors';
import type { ServiceClient } from '@ota/grpc';
import type { OutboundCall } from '@ota/logging';
import type { artifacts, rollout } from '@ota/proto';

type RolloutClient = ServiceClient<typeof rollout.RolloutServiceService>;
type ArtifactsClient = ServiceClient<typeof artifacts.ArtifactsServiceService>;

/** Where registry's check views load from: rollout's active deployments and artifacts' builds. */
export class GrpcDecisionSources implements ViewSources<DecisionDeployment> {
  constructor(
    private readonly rollout: RolloutClient,
    private readonly artifacts: ArtifactsClient,
  ) {}

  async loadActiveDeployments(): Promise<DecisionDeployment[]> {
    const { deployments } = await this.rollout.listActiveDeployments({});
    return deployments.map(decisionDeploymentOf);
  }

  async loadDeployment(id: string, projectId: string, call?: OutboundCall): Promise<DecisionDeployment | null> {
    try {
      const { deployment } = await this.rollout.getDeployment({ projectId, deploymentId: id }, call);
      return deployment ? decisionDeploymentOf(deployment) : null;
    } catch (error) {
      // Gone with its project: nothing to hold.
      if (isDomainError(error, 'NotFound')) return null;
      throw error;
    }
  }

  async loadArtifacts(): Promise<ArtifactSummary[]> {
    const { artifacts: all } = await this.artifacts.listArtifacts({ projectId: '' });
    return all.map(summaryOfArtifact);
  }
}

export function decisionDeploymentOf(deployment: rollout.Deployment): DecisionDeployment {
  return {
    id: deployment.id,
    projectId: deployment.projectId,
    artifactId: deployment.artifactId,
    state: deployment.state,
    targetGroupIds: deployment.targetGroupIds,
    targetChannelIds: deployment.targetChannelIds,
    rolloutPercentage: deployment.rolloutPercentage,
    createdAt: deployment.createdAt ?? new Date(0),
    startedAt: deployment.startedAt ?? null,
    maintenance: deployment.maintenance && scheduleOfMessage(deployment.maintenance),
    watchesHealth: deployment.guardrails?.healthRegression !== undefined,
  };
}
