import { invalidArgument } from '@ota/errors';
import type { SecureVersionRaise } from '@ota/manifest';
import type { artifacts, registry, rollout } from '@ota/proto';
import type { Role } from '../auth/roles';
import { holdsJson, holdsOnBytes, requireHoldsOverridden } from './build-holds';
import { preparePatches, type PatchPreparationPorts } from './patch-preparation';
import type { ArtifactsPort, AuditLog, Caller, RegistryPort, RolloutPort } from './ports';
import { checkSecureVersionRaise, type ReleasedImage } from './secure-version-raise';

export interface ReleasePorts extends PatchPreparationPorts {
  artifacts: ArtifactsPort<'patchForOffer' | 'listArtifacts'>;
  registry: RegistryPort<'listChannels' | 'countCurrentImages'>;
  rollout: RolloutPort<'createDeployment' | 'listBuildHolds'>;
  audit: AuditLog;
}

/** Where a release goes: a channel of the project, at a percentage. */
export interface ReleaseTarget {
  channel: registry.Channel;
  rolloutPercentage: number;
  /** The build raises secure_version, and the release acknowledged it. */
  secureVersionRaise: SecureVersionRaise | null;
  /** The holds on a build of the same bytes that the release went around (`override_holds=true`). */
  overriddenHolds: rollout.BuildHold[];
}

/** What a release's upload says of its binary once read: its image, and its SHA-256 (hex). */
export interface ReleasedBinary {
  image: ReleasedImage;
  checksumSha256: string;
}

/**
 * The target of a release from its form fields (`channel_name`, default `stable`, must exist;
 * `rollout_percentage`, default 100), and a raise of secure_version acknowledged
 * (`acknowledge_secure_version_raise=true`, by an approver). It is resolved while the upload is
 * still open, so that a refusal cancels the upload: nothing is stored and no build number is taken.
 */
export async function resolveReleaseTarget(
  ports: ReleasePorts,
  caller: Caller & { role: Role },
  projectId: string,
  fields: ReadonlyMap<string, string>,
  binary: ReleasedBinary,
): Promise<ReleaseTarget> {
  const channelName = fields.get('channel_name') ?? 'stable';
  const percentageText = fields.get('rollout_percentage') ?? '100';
  if (!/^\d{1,3}$/.test(percentageText) || Number(percentageText) > 100) {
    throw invalidArgument('rollout_percentage must be an integer from 0 to 100');
  }
  const { channels } = await ports.registry.listChannels({ projectId }, caller.call);
  const channel = channels.find((candidate) => candidate.name === channelName);
  if (!channel) throw invalidArgument(`channel "${channelName}" does not exist in this project`);
  const acknowledged = fields.get('acknowledge_secure_version_raise') ?? 'false';
  if (acknowledged !== 'true' && acknowledged !== 'false') throw invalidArgument('acknowledge_secure_version_raise must be true or false');
  const secureVersionRaise = await checkSecureVersionRaise(ports, caller, projectId, { releasedImage: binary.image }, acknowledged === 'true');
  const override = fields.get('override_holds') ?? 'false';
  if (override !== 'true' && override !== 'false') throw invalidArgument('override_holds must be true or false');
  const held = await holdsOnBytes(ports, caller, projectId, binary.checksumSha256);
  const overriddenHolds = requireHoldsOverridden(caller, 'Releasing the bytes', held.buildNumber, held.holds, override === 'true');
  return { channel, rolloutPercentage: Number(percentageText), secureVersionRaise, overriddenHolds };
}

/** Creates and starts the deployment of an uploaded build to its release target. */
export async function startRelease(ports: ReleasePorts, caller: Caller, artifact: artifacts.Artifact, target: ReleaseTarget): Promise<rollout.Deployment> {
  const { deployment } = await ports.rollout.createDeployment(
    {
      projectId: artifact.projectId,
      artifactId: artifact.id,
      targetGroupIds: [],
      targetChannelIds: [target.channel.id],
      rolloutPercentage: target.rolloutPercentage,
      rolloutStrategy: 'immediate',
      notes: '',
      start: true,
      guardrails: undefined,
      stages: [],
    },
    caller.call,
  );
  await ports.audit.record(caller.principal, {
    projectId: artifact.projectId,
    action: 'release.created',
    targetType: 'deployment',
    targetId: deployment!.id,
    details: {
      artifact_id: artifact.id,
      build_number: artifact.buildNumber,
      channel: target.channel.name,
      rollout_percentage: target.rolloutPercentage,
      ...raiseDetails(target.secureVersionRaise),
      ...(target.overriddenHolds.length > 0 ? { overridden_holds: holdsJson(target.overriddenHolds) } : {}),
    },
  });
  // Behind the answer, as for a started deployment (use-cases/deployments.ts).
  void preparePatches(ports, { projectId: artifact.projectId, artifactId: artifact.id }, caller.call).catch(() => undefined);
  return deployment!;
}

/** How the audit (and so the webhook) says that a deployment raises secure_version. */
export function raiseDetails(raise: SecureVersionRaise | null) {
  return raise ? { secure_version_raise: { from: raise.from, to: raise.to, efuse_bits_left: raise.efuseBitsLeft } } : {};
}
