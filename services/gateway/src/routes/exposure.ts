import type { GatewayDeps } from '../deps';
import type { OperationTable } from '../http/operations';
import * as R from '../http/response-schemas';
import { rpc } from './context';

const exposureQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 2048, description: 'The component\'s name, as its SBOMs write it (case is ignored): `mbedtls`.' },
    purl: { type: 'string', minLength: 1, maxLength: 2048, description: 'Its package URL without a version: `pkg:github/mbed-tls/mbedtls`.' },
    cpe: { type: 'string', minLength: 1, maxLength: 2048, description: 'Its CPE 2.3, at least part, vendor and product: `cpe:2.3:a:arm:mbed_tls`.' },
    versions: { type: 'string', minLength: 1, maxLength: 256, description: 'The affected versions: `<3.6.3`, `>=2.0,<2.1.4`, `=1.2.3 || >=2.0,<2.0.7`. Without it, every version.' },
  },
} as const;

/** Which devices run a component (docs/api.md, "Exposure"). */
export function exposureRoutes(table: OperationTable, deps: GatewayDeps): void {
  const exposure = table.section({ tag: 'Artifacts', access: 'developer' });
  const { clients } = deps;

  exposure.add(
    {
      route: 'GET /projects/:id/exposure/',
      operationId: 'getExposure',
      summary: 'Which devices run a component, and which deployments move them off it',
      description:
        "The project's builds whose SBOM lists the component (by `name`, `purl` or `cpe`: one of them) within `versions`, with how many active devices run each now; the builds without an SBOM that devices run, of which it cannot be said; and the active or paused deployments of builds that do not list it. Exact: counted from the SBOMs' indexed components and every active device's `current_build_number`.",
      project: 'viewer',
      query: exposureQuery,
      responses: { 200: R.Exposure },
    },
    async (ctx, { project, query }) => {
      const [found, fleet, { deployments }] = await Promise.all([
        clients.artifacts.findSbomComponents({ projectId: project.id, name: query.name ?? '', purl: query.purl ?? '', cpe: query.cpe ?? '', versions: query.versions ?? '' }, rpc(ctx)),
        // Now only: no snapshots are read.
        clients.registry.listFleetBuilds({ projectId: project.id, channelId: '', groupId: '', since: new Date() }, rpc(ctx)),
        clients.rollout.listDeployments({ projectId: project.id }, rpc(ctx)),
      ]);
      const devicesOn = new Map(fleet.now.map((count) => [Number(count.buildNumber), Number(count.devices)]));
      const affected = new Set(found.matches.map((match) => match.artifactId));
      const sbomless = new Set(found.buildsWithoutSbom.map((build) => build.artifactId));
      const builds = found.matches.map((match) => ({
        artifact_id: match.artifactId,
        build_number: Number(match.buildNumber),
        version_label: match.versionLabel,
        component: { name: match.name, version: match.version, purl: match.purl },
        devices: devicesOn.get(Number(match.buildNumber)) ?? 0,
      }));
      const unknownBuilds = found.buildsWithoutSbom
        .map((build) => ({ artifact_id: build.artifactId, build_number: Number(build.buildNumber), devices: devicesOn.get(Number(build.buildNumber)) ?? 0 }))
        .filter((build) => build.devices > 0);
      ctx.body = {
        builds,
        devices: [...new Set(builds.map((build) => build.build_number))].reduce((sum, buildNumber) => sum + (devicesOn.get(buildNumber) ?? 0), 0),
        unknown: {
          builds: unknownBuilds,
          devices: unknownBuilds.reduce((sum, build) => sum + build.devices, 0),
          // Devices that confirmed no build of the project run what they came with.
          never_updated: devicesOn.get(0) ?? 0,
        },
        deployments: deployments
          .filter((deployment) => (deployment.state === 'active' || deployment.state === 'paused') && !affected.has(deployment.artifactId))
          .sort((a, b) => Number(a.buildNumber) - Number(b.buildNumber) || a.id.localeCompare(b.id))
          .map((deployment) => ({
            deployment_id: deployment.id,
            build_number: Number(deployment.buildNumber),
            state: deployment.state as 'active' | 'paused',
            rollout_percentage: deployment.rolloutPercentage,
            target: sbomless.has(deployment.artifactId) ? ('without_sbom' as const) : ('without_component' as const),
          })),
      };
    },
  );
}
