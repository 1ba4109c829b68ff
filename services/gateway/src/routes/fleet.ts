import type { registry } from '@ota/proto';
import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { UUID_TEXT } from '../http/schemas';
import { rpc } from './context';

/** How far back a fleet chart reaches by default, and at most (FLEET_SNAPSHOT_RETENTION_DAYS keeps 90 by default). */
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;

const fleetQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    channel_id: { ...UUID_TEXT, description: 'The devices of this channel only.' },
    group_id: { ...UUID_TEXT, description: 'The members of this group only (not with `channel_id`).' },
    days: { type: 'integer', minimum: 1, maximum: MAX_DAYS, description: `How many days of snapshots. Default ${DEFAULT_DAYS}.` },
  },
} as const;

/** Which builds the fleet runs, now and over time (docs/api.md, "Fleet builds"). */
export function fleetRoutes(table: OperationTable, deps: GatewayDeps): void {
  const fleet = table.section({ tag: 'Devices', access: 'developer' });
  const { clients } = deps;

  fleet.add(
    {
      route: 'GET /projects/:id/fleet/builds/',
      operationId: 'listFleetBuilds',
      summary: 'Which builds the fleet runs, now and over time',
      description:
        "The active devices per build they run (their `current_build_number`), of the project, one channel or one group: `now`, counted on the request, and `history`, the snapshots registry takes each `FLEET_SNAPSHOT_MINUTES` (default 60), oldest first, for the last `days`. A period whose snapshot was not taken (no replica ran then) is missing, not zero. A channel or group of another project is 404.",
      project: 'viewer',
      query: fleetQuery,
      responses: { 200: R.FleetBuilds },
      errors: [404],
    },
    async (ctx, { project, query }) => {
      const since = new Date(Date.now() - (query.days ?? DEFAULT_DAYS) * 86_400_000);
      const answer = await clients.registry.listFleetBuilds({ projectId: project.id, channelId: query.channel_id ?? '', groupId: query.group_id ?? '', since }, rpc(ctx));
      const counts = (builds: registry.BuildCount[]) => builds.map((count) => ({ build_number: Number(count.buildNumber), devices: Number(count.devices) }));
      ctx.body = {
        now: { at: new Date().toISOString(), builds: counts(answer.now) },
        history: answer.snapshots.map((snapshot) => ({ at: (snapshot.at ?? new Date(0)).toISOString(), builds: counts(snapshot.builds) })),
      };
    },
  );
}
