import { EVENTS, type Bus } from '@ota/bus';
import type { ArtifactEvents } from '../../domain/ports';
import { artifactMessage } from '../../grpc/artifact-message';

/** Tells rollout's and registry's replicas (core NATS) of every new or changed artifact, for the views the check decides from. */
export function natsArtifactEvents(bus: Bus): ArtifactEvents {
  return { artifactChanged: (artifact) => bus.publish(EVENTS.artifactChanged, artifactMessage(artifact)) };
}
