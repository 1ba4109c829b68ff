import type { artifacts } from '@ota/proto';
import type { OutboundCall } from '@ota/logging';
import type { ArtifactsPort } from './ports';

export interface PatchOfferPorts {
  artifacts: ArtifactsPort<'patchForOffer'>;
  /** PATCH_OFFER_WAIT_SECONDS: how long after a patch was asked for a delta-capable device waits for it; 0 never waits. */
  patchOfferWaitSeconds: number;
  now(): Date;
}

/** What the device that checked runs and applies, and the build it is offered. */
export interface PatchOfferRequest {
  projectId: string;
  build: { artifactId: string; fileSize: number; checksumSha256: string };
  /** The check's `current_hash`, as sent. */
  currentHash?: string;
  /** The check's `delta_formats`, in the device's order of preference. */
  deltaFormats?: string[];
}

/**
 * How an offer's build reaches the device (docs/api.md, "Delta patches"):
 * - `patch`: a ready patch from the image it runs, smaller than the build;
 * - `wait` until `until`: a patch is queued or being made and was asked for less than
 *   PATCH_OFFER_WAIT_SECONDS ago, so the device is told to come back rather than download the
 *   whole build a moment before its patch is ready;
 * - `full`: the build alone (no capability, an image no build has, a failed or slow patch).
 */
export type PatchOffer = { kind: 'patch'; patch: artifacts.Patch; baseSha256: string } | { kind: 'wait'; until: Date } | { kind: 'full' };

const MAKING = new Set(['queued', 'building']);

/** Asking also queues a patch from a known base that has none (the artifacts service does that). */
export async function patchOfferOf(ports: PatchOfferPorts, request: PatchOfferRequest, call: OutboundCall): Promise<PatchOffer> {
  const base = request.currentHash?.toLowerCase();
  if (!request.deltaFormats?.length || !base || !/^[0-9a-f]{64}$/.test(base) || base === request.build.checksumSha256) return { kind: 'full' };
  const now = ports.now().getTime();
  let waitUntil: number | undefined;
  for (const format of request.deltaFormats) {
    const { patch } = await ports.artifacts.patchForOffer({ projectId: request.projectId, targetArtifactId: request.build.artifactId, baseSha256: base, format }, call);
    if (!patch) continue;
    if (patch.state === 'ready') {
      if (Number(patch.size) < request.build.fileSize) return { kind: 'patch', patch, baseSha256: base };
      continue;
    }
    if (!MAKING.has(patch.state) || !patch.createdAt) continue;
    const until = patch.createdAt.getTime() + ports.patchOfferWaitSeconds * 1000;
    if (until > now) waitUntil = Math.min(waitUntil ?? until, until);
  }
  return waitUntil === undefined ? { kind: 'full' } : { kind: 'wait', until: new Date(waitUntil) };
}
