import { EVENTS, type Bus } from '@ota/bus';
import type { Logger } from '@ota/logging';
import { summaryOfArtifact, type DecisionDeployment, type InMemoryDecisionViews } from '@ota/decision';

/**
 * Keeps decision views in step with what artifacts and rollout publish (core NATS). Call it
 * before the views' first load, so that nothing that changes during the load is missed.
 */
export function followViewEvents<D extends DecisionDeployment>(bus: Bus, views: InMemoryDecisionViews<D>, logger: Logger): void {
  bus.subscribe(EVENTS.artifactChanged, (artifact) => views.artifactSeen(summaryOfArtifact(artifact)));
  // Answered once applied (or not): a start waits for the replicas' answers before it answers itself.
  bus.serve(EVENTS.deploymentChanged, async (event) => ({
    applied: await views.deploymentChanged(event.id, event.projectId).then(
      () => true,
      (error: unknown) => {
        logger.warn({ err: error }, 'reading a changed deployment failed; the periodic reload catches up');
        return false;
      },
    ),
  }));
  // Core subscriptions missed whatever was published while NATS was away: reload at once rather
  // than at the next periodic reload.
  bus.onReconnect(() => {
    views.reload().catch((error: unknown) => logger.warn({ err: error }, 'view reload after reconnect failed; the periodic reload retries'));
  });
}
