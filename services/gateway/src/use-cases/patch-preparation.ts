import type { OutboundCall } from '@ota/logging';
import type { ArtifactsPort, RegistryPort } from './ports';

export interface PatchPreparationPorts {
  registry: RegistryPort<'countCurrentImages'>;
  artifacts: ArtifactsPort<'patchForOffer'>;
  /** PATCH_BASES_PER_BUILD: how many of the most-run images a started build gets patches from; 0 asks for none. */
  patchBasesPerBuild: number;
}

/**
 * Asks for the delta patches a started deployment's build will be offered with (docs/api.md,
 * "Delta patches"): one from each of the images the project's devices report running, most-run
 * first, up to PATCH_BASES_PER_BUILD. Images that are no build of the project, and the build
 * itself, get none. The patch workers make them off the request's path; answers how many were
 * asked for (or found already asked for).
 */
export async function preparePatches(ports: PatchPreparationPorts, build: { projectId: string; artifactId: string }, call: OutboundCall): Promise<number> {
  if (ports.patchBasesPerBuild <= 0) return 0;
  const { images } = await ports.registry.countCurrentImages({ projectId: build.projectId }, call);
  let asked = 0;
  for (const image of images) {
    if (asked >= ports.patchBasesPerBuild) break;
    const { patch } = await ports.artifacts.patchForOffer({ projectId: build.projectId, targetArtifactId: build.artifactId, baseSha256: image.sha256, format: '' }, call);
    if (patch) asked++;
  }
  return asked;
}
