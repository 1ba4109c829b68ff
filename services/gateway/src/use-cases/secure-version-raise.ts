import { invalidArgument } from '@ota/errors';
import { secureVersionRaise, type EspImage, type SecureVersionRaise } from '@ota/manifest';
import { requireRole, type Role } from '../auth/roles';
import type { ArtifactsPort, Caller } from './ports';

export interface RaisePorts {
  artifacts: ArtifactsPort<'listArtifacts'>;
}

/** The image of a release's build, read before it is stored: it comes after every stored build. */
export type ReleasedImage = Pick<EspImage, 'chip' | 'secureVersion'> | null;

/**
 * A build that raises secure_version burns eFuse bits on every device that confirms it: deploying
 * it needs `acknowledge_secure_version_raise` and the approver role (docs/api.md, "Raising
 * secure_version"). Answers the raise, for the audit, or null; throws when either is missing.
 * `build` is the artifact id of a stored build, or the image of a release's build.
 */
export async function checkSecureVersionRaise(
  ports: RaisePorts,
  caller: Caller & { role: Role },
  projectId: string,
  build: string | { releasedImage: ReleasedImage },
  acknowledged: boolean,
): Promise<SecureVersionRaise | null> {
  const { artifacts: stored } = await ports.artifacts.listArtifacts({ projectId }, caller.call);
  const candidate = typeof build === 'string' ? stored.find((artifact) => artifact.id === build) : { buildNumber: Infinity, image: build.releasedImage };
  // An id that names no build is refused by rollout, with its own detail.
  if (!candidate) return null;
  const raise = secureVersionRaise(candidate, stored);
  if (!raise) return null;
  const what = Number.isFinite(candidate.buildNumber) ? `build ${candidate.buildNumber}` : 'the build';
  if (!acknowledged) {
    throw invalidArgument(
      `${what} raises secure_version from ${raise.from} to ${raise.to}: every device that confirms it burns eFuse bits and can never again run a build below ${raise.to} ` +
        `(the chip keeps ${raise.efuseBitsLeft} more). This cannot be undone; send acknowledge_secure_version_raise: true to deploy it`,
    );
  }
  requireRole(caller.role, 'approver', `Deploying a build that raises secure_version (${raise.from} to ${raise.to})`);
  return raise;
}
