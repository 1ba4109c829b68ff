import type { OutboundCall } from '@ota/logging';
import type { ServiceClients } from './ports';

/** A component as exposure names it (one of the three) and the affected versions ('' for every one). */
export interface ComponentQuery {
  name: string;
  purl: string;
  cpe: string;
  versions: string;
}

/**
 * Which devices run a component (docs/api.md, "Exposure"): the builds whose SBOM lists it within
 * the versions with the active devices on each now, what cannot be said (builds without an SBOM,
 * devices that confirmed no build), and the deployments that move devices off it.
 */
export async function exposureOf(clients: Pick<ServiceClients, 'artifacts' | 'registry' | 'rollout'>, projectId: string, component: ComponentQuery, call: OutboundCall) {
  const [found, fleet, { deployments }] = await Promise.all([
    clients.artifacts.findSbomComponents({ projectId, ...component }, call),
    // Now only: no snapshots are read.
    clients.registry.listFleetBuilds({ projectId, channelId: '', groupId: '', since: new Date() }, call),
    clients.rollout.listDeployments({ projectId }, call),
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
  return {
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
}
