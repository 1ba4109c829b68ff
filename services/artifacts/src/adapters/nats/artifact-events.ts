import { EVENTS, type Bus } from '@ota/bus';
import type { ArtifactEvents } from '../../domain/ports';
// The event is the artifact's gRPC message, so that rollout reads both with one mapper.
import { artifactMessage } from '../../grpc/artifacts-handlers';

/** Tells rollout's replicas (core NATS) of every new or changed artifact, for their read models. */
export function natsArtifactEvents(bus: Bus): ArtifactEvents {
  return { artifactChanged: (artifact) => bus.publish(EVENTS.artifactChanged, artifactMessage(artifact)) };
}
