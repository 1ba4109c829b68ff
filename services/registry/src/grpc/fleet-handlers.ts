import { invalidArgument, notFound } from '@ota/errors';
import type { Handlers } from '@ota/grpc';
import type { registry as pb } from '@ota/proto';
import type { BuildCount, FleetBuildStore, FleetScope } from '../domain/fleet-builds';

/** The fleet's builds (docs/api.md, "Fleet builds"): now, counted on the call, and the snapshots since. */
export function fleetHandlers(store: FleetBuildStore): Pick<Handlers<typeof pb.RegistryServiceService>, 'listFleetBuilds'> {
  return {
    async listFleetBuilds(request) {
      if (request.channelId && request.groupId) throw invalidArgument('name a channel or a group, not both');
      const scope: FleetScope = request.channelId ? { kind: 'channel', id: request.channelId } : request.groupId ? { kind: 'group', id: request.groupId } : { kind: 'project' };
      if (!(await store.scopeExists(request.projectId, scope))) throw notFound(`${scope.kind} not found`);
      const [now, snapshots] = await Promise.all([store.countBuilds(request.projectId, scope), store.snapshots(request.projectId, scope, request.since ?? new Date(0), new Date())]);
      const message = (counts: BuildCount[]) => counts.map((count) => ({ buildNumber: count.buildNumber, devices: count.devices }));
      return { now: message(now), snapshots: snapshots.map((snapshot) => ({ at: snapshot.at, builds: message(snapshot.builds) })) };
    },
  };
}
