import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { integer, seconds, UsageError } from './args';
import { ApiRefusal, ok, type Api, type BodyOf, type Schemas } from './client';

/** The manifest keys that flags can give (docs/api.md, the manifest). */
export const MANIFEST_FLAGS = {
  manifest: { type: 'string' },
  version: { type: 'string' },
  framework: { type: 'string' },
  'chip-family': { type: 'string' },
  'board-id': { type: 'string' },
  'hardware-revision': { type: 'string' },
  'partition-profile': { type: 'string' },
  'min-nvs-schema-version': { type: 'string' },
  'security-mode': { type: 'string' },
  'release-notes': { type: 'string' },
  signature: { type: 'string' },
  binary: { type: 'string' },
} as const;

type ManifestValues = Partial<Record<keyof typeof MANIFEST_FLAGS, string>>;

/** The manifest as JSON text: the file of --manifest, or one made of the flags. */
export function manifestText(values: ManifestValues): string {
  if (values.manifest) {
    try {
      return readFileSync(values.manifest, 'utf8');
    } catch (error) {
      throw new UsageError(`--manifest ${values.manifest} cannot be read: ${(error as Error).message}`);
    }
  }
  if (!values.version || !values['chip-family']) throw new UsageError('give --manifest FILE, or at least --version and --chip-family (and --framework, default esp_idf)');
  const manifest: Record<string, unknown> = { version_label: values.version, framework: values.framework ?? 'esp_idf', chip_family: values['chip-family'] };
  const text: Array<[keyof ManifestValues, string]> = [
    ['board-id', 'board_id'],
    ['hardware-revision', 'hardware_revision'],
    ['partition-profile', 'partition_profile'],
    ['security-mode', 'security_mode'],
    ['release-notes', 'release_notes'],
    ['signature', 'signature'],
  ];
  for (const [flag, key] of text) if (values[flag]) manifest[key] = values[flag];
  if (values['min-nvs-schema-version']) manifest.min_nvs_schema_version = integer(values['min-nvs-schema-version'], '--min-nvs-schema-version', 0, 2 ** 31 - 1);
  return JSON.stringify(manifest);
}

export function readBinary(path: string | undefined): { bytes: Buffer; name: string } {
  if (!path) throw new UsageError('--binary FILE is required');
  try {
    return { bytes: readFileSync(path), name: basename(path) };
  } catch (error) {
    throw new UsageError(`--binary ${path} cannot be read: ${(error as Error).message}`);
  }
}

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

/**
 * Uploads a build once: the Idempotency-Key is derived from the binary's SHA-256 and the manifest,
 * so a retried or parallel job gets the same artifact back and stores nothing more.
 */
export async function uploadOnce(api: Api, projectId: string, binary: { bytes: Buffer; name: string }, manifest: string): Promise<Schemas['Artifact']> {
  const key = `otactl-upload-${sha256(`${sha256(binary.bytes)}\n${manifest}`)}`;
  return ok(
    api.POST('/api/v1/projects/{id}/artifacts/', {
      params: { path: { id: projectId }, header: { 'Idempotency-Key': key } },
      // The manifest goes as the text the user wrote: the gateway reads it as JSON and says what is
      // wrong with it, as it does for any client. The document types the part as the Manifest it holds.
      body: { manifest: manifest as unknown as Schemas['Manifest'], binary: binary.name },
      // The manifest first: the gateway checks it before it stores a byte of the binary.
      bodySerializer: (fields) => {
        const form = new FormData();
        form.append('manifest', manifest);
        form.append('binary', new Blob([binary.bytes]), fields.binary);
        return form;
      },
    }),
  );
}

/** A file a release sends beside the image (--elf, --sbom), read before anything is uploaded. */
export function readCompanion(flag: '--elf' | '--sbom', path: string | undefined): Buffer | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new UsageError(`${flag} ${path} cannot be read: ${(error as Error).message}`);
  }
}

/**
 * Sends a file of the build beside its image, as the raw body (sending the same one again is
 * harmless): its ELF, with which the service decodes its core dumps (docs/api.md, "A build's ELF"),
 * or its SBOM (docs/api.md, "SBOMs").
 */
export async function uploadCompanion(api: Api, projectId: string, artifactId: string, kind: 'elf' | 'sbom', bytes: Buffer): Promise<Schemas['Artifact']> {
  const path = kind === 'elf' ? '/api/v1/projects/{id}/artifacts/{aid}/elf/' : '/api/v1/projects/{id}/artifacts/{aid}/sbom/';
  return ok(
    api.PUT(path, {
      params: { path: { id: projectId, aid: artifactId } },
      body: bytes as never,
      headers: { 'content-type': 'application/octet-stream' },
      bodySerializer: (raw: unknown) => raw as never,
    }),
  );
}

/** The flags that shape the deployment of a release. */
export const DEPLOYMENT_FLAGS = {
  channel: { type: 'string', multiple: true },
  group: { type: 'string', multiple: true },
  'all-devices': { type: 'boolean', default: false },
  percentage: { type: 'string' },
  stages: { type: 'string' },
  'stage-wait': { type: 'string', default: '0' },
  'stage-approval': { type: 'boolean', default: false },
  'failure-threshold': { type: 'string' },
  'reason-limit': { type: 'string', multiple: true },
  'confirm-timeout': { type: 'string' },
  'health-guardrail': { type: 'boolean', default: false },
  'health-margin': { type: 'string' },
  'health-significance': { type: 'string' },
  'health-min-devices': { type: 'string' },
  'health-min-hours': { type: 'string' },
  'max-offers-per-minute': { type: 'string' },
  'max-in-progress': { type: 'string' },
  window: { type: 'string', multiple: true },
  'window-zone': { type: 'string', default: 'UTC' },
  'window-device-local-time': { type: 'boolean', default: false },
  notes: { type: 'string' },
  'run-id': { type: 'string' },
  'despite-holds': { type: 'boolean', default: false },
  // The flag's earlier name, from when only a guardrail pause held a build.
  'despite-guardrail-pause': { type: 'boolean', default: false },
  'acknowledge-secure-version-raise': { type: 'boolean', default: false },
} as const;

type DeploymentValues = {
  channel?: string[];
  group?: string[];
  'all-devices'?: boolean;
  percentage?: string;
  stages?: string;
  'stage-wait'?: string;
  'stage-approval'?: boolean;
  'failure-threshold'?: string;
  'reason-limit'?: string[];
  'confirm-timeout'?: string;
  'health-guardrail'?: boolean;
  'health-margin'?: string;
  'health-significance'?: string;
  'health-min-devices'?: string;
  'health-min-hours'?: string;
  'max-offers-per-minute'?: string;
  'max-in-progress'?: string;
  window?: string[];
  'window-zone'?: string;
  'window-device-local-time'?: boolean;
  notes?: string;
  'run-id'?: string;
  'despite-holds'?: boolean;
  'despite-guardrail-pause'?: boolean;
  'acknowledge-secure-version-raise'?: boolean;
};

/** Where a release goes: group and channel ids, and whether that is every device of the project. */
export interface Targets {
  groupIds: string[];
  channelIds: string[];
  untargeted: boolean;
}

/**
 * The deployment's targets and plan from the flags, checked and resolved (an unknown name, a flag
 * out of its form, no target without --all-devices): called before anything is uploaded.
 */
export async function targetsOf(api: Api, projectId: string, values: DeploymentValues): Promise<Targets> {
  deploymentPlan(values);
  const { groupIds, channelIds } = await idsOf(api, projectId, values);
  const untargeted = groupIds.length === 0 && channelIds.length === 0;
  if (untargeted && !values['all-devices']) throw new UsageError('name the targets with --group and/or --channel, or pass --all-devices to reach every device of the project');
  return { groupIds, channelIds, untargeted };
}

/** Group and channel names to ids; an unknown name is refused before anything is created. */
async function idsOf(api: Api, projectId: string, values: DeploymentValues) {
  const path = { path: { id: projectId } };
  const [groups, channels] = await Promise.all([ok(api.GET('/api/v1/projects/{id}/groups/', { params: path })), ok(api.GET('/api/v1/projects/{id}/channels/', { params: path }))]);
  const resolve = (names: string[] | undefined, known: Array<{ id: string; name: string }>, kind: string) =>
    (names ?? []).map((name) => {
      const found = known.find((candidate) => candidate.name === name);
      if (!found) throw new ApiRefusal(400, `no ${kind} named "${name}" in this project (it has: ${known.map((candidate) => candidate.name).join(', ') || 'none'})`);
      return found.id;
    });
  return { groupIds: resolve(values.group, groups, 'group'), channelIds: resolve(values.channel, channels, 'channel') };
}

/** The deployment body of the flags (docs/api.md, "Guardrails and staged plans"). */
export function deploymentPlan(values: DeploymentValues) {
  const guardrails: Record<string, unknown> = {};
  if (values['failure-threshold']) {
    const match = /^(\d+(?:\.\d+)?)%?:(\d+)$/.exec(values['failure-threshold']);
    if (!match) throw new UsageError('--failure-threshold is PERCENT:MIN_FINISHED, e.g. 20:10 (pause at 20% failed of at least 10 finished)');
    guardrails.failure_threshold = { percent: Number(match[1]), min_finished: Number(match[2]) };
  }
  if (values['reason-limit']?.length) {
    guardrails.reason_limits = values['reason-limit'].map((text) => {
      const match = /^([a-z0-9_]+):(\d+):(.+)$/.exec(text);
      if (!match) throw new UsageError('--reason-limit is REASON:COUNT:WINDOW, e.g. signature_invalid:3:10m');
      return { reason: match[1], count: Number(match[2]), window_seconds: seconds(match[3]!, '--reason-limit window') };
    });
  }
  if (values['confirm-timeout']) guardrails.confirm_timeout_seconds = seconds(values['confirm-timeout'], '--confirm-timeout');
  // Any of its settings asks for the guardrail too; one left out takes the service's default.
  const health = {
    ...(values['health-margin'] !== undefined ? { margin_percent: integer(values['health-margin'], '--health-margin', 0, 1000) } : {}),
    ...(values['health-significance'] !== undefined ? { significance: fraction(values['health-significance'], '--health-significance') } : {}),
    ...(values['health-min-devices'] !== undefined ? { min_devices: integer(values['health-min-devices'], '--health-min-devices', 1, 1_000_000_000) } : {}),
    ...(values['health-min-hours'] !== undefined ? { min_device_hours: integer(values['health-min-hours'], '--health-min-hours', 1, 1_000_000_000) } : {}),
  };
  if (values['health-guardrail'] || Object.keys(health).length > 0) guardrails.health_regression = health;
  const caps = {
    ...(values['max-offers-per-minute'] !== undefined ? { offers_per_minute: integer(values['max-offers-per-minute'], '--max-offers-per-minute', 1, 100_000) } : {}),
    ...(values['max-in-progress'] !== undefined ? { max_in_progress: integer(values['max-in-progress'], '--max-in-progress', 1, 1_000_000_000) } : {}),
  };
  const percentages = (values.stages ?? '').split(',').map((part) => part.trim()).filter(Boolean);
  if (percentages.length > 0 && values.percentage !== undefined) throw new UsageError('give --percentage or --stages, not both: a staged plan starts at its first stage');
  const wait = seconds(values['stage-wait'] ?? '0', '--stage-wait');
  const stages = percentages.map((text, index) => ({ percentage: integer(text, '--stages', 0, 100), min_wait_seconds: wait, approval_required: index > 0 && Boolean(values['stage-approval']) }));
  const windows = (values.window ?? []).map(windowOf);
  // Checked here too, so that a mistyped zone is refused before the upload, not after it.
  if (windows.length > 0 && !isKnownTimeZone(values['window-zone'] ?? 'UTC')) throw new UsageError(`--window-zone ${values['window-zone']} is not a time zone: give an IANA name such as Europe/Berlin, or UTC`);
  return {
    ...(stages.length > 0 ? { stages } : { rollout_percentage: integer(values.percentage ?? '100', '--percentage', 0, 100) }),
    ...(Object.keys(guardrails).length > 0 ? { guardrails } : {}),
    ...(Object.keys(caps).length > 0 ? { caps } : {}),
    ...(windows.length > 0 ? { maintenance_windows: { time_zone: values['window-zone'] ?? 'UTC', in_device_local_time: Boolean(values['window-device-local-time']), windows } } : {}),
    ...(values.notes ? { notes: values.notes } : {}),
    ...(values['acknowledge-secure-version-raise'] ? { acknowledge_secure_version_raise: true } : {}),
  };
}

const WINDOW_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** `--window DAYS@HH:MM+DURATION` (e.g. `sat,sun@01:30+3h`) as the API's window; the API checks the zone. */
function windowOf(text: string) {
  const usage = '--window is DAYS@HH:MM+DURATION, e.g. sat,sun@01:30+3h (days mon to sun, comma-separated)';
  const match = /^([a-z,]+)@([0-2]\d:[0-5]\d)\+(.+)$/.exec(text.trim());
  if (!match) throw new UsageError(usage);
  const days = match[1]!.split(',').filter(Boolean);
  if (days.length === 0 || days.some((day) => !WINDOW_DAYS.includes(day as (typeof WINDOW_DAYS)[number]))) throw new UsageError(usage);
  const minutes = seconds(match[3]!, '--window duration') / 60;
  if (!Number.isInteger(minutes) || minutes < 1) throw new UsageError('--window duration must be whole minutes, at least 1m');
  return { days: days as Array<(typeof WINDOW_DAYS)[number]>, start: match[2]!, duration_minutes: minutes };
}

/**
 * What holds this build back (docs/api.md, "Holds on a build"): a deployment of it a guardrail
 * paused, or one whose approval gate is still ahead. A new run of the pipeline must not quietly
 * roll the same build out again beside it.
 */
export async function holdsOf(api: Api, projectId: string, artifactId: string): Promise<Array<Schemas['BuildHold']>> {
  return ok(api.GET('/api/v1/projects/{id}/artifacts/{aid}/holds/', { params: { path: { id: projectId, aid: artifactId } } }));
}

/** Whether the run goes around the holds on its build: --despite-holds, or its earlier name. */
export function despiteHolds(values: DeploymentValues): boolean {
  return Boolean(values['despite-holds'] || values['despite-guardrail-pause']);
}

/**
 * Creates the deployment once per artifact, plan and run (`--run-id`), and starts it. A parallel or
 * retried job gets the same deployment; a start that another job made first is not an error.
 */
export async function deployAndStart(api: Api, projectId: string, artifactId: string, values: DeploymentValues, targets: Targets): Promise<Schemas['Deployment']> {
  const { groupIds, channelIds, untargeted } = targets;
  const body: BodyOf<'createDeployment'> = { artifact_id: artifactId, target_group_ids: groupIds, target_channel_ids: channelIds, ...deploymentPlan(values) };
  const key = `otactl-deploy-${sha256(JSON.stringify({ body, run: values['run-id'] ?? '' }))}`;
  const path = { id: projectId };
  const created = await ok(api.POST('/api/v1/projects/{id}/deployments/', { params: { path, header: { 'Idempotency-Key': key } }, body }));
  if (created.state !== 'draft') return created;
  const start: BodyOf<'transitionDeployment'> = { action: 'start', ...(untargeted ? { confirm_all: true } : {}), ...(despiteHolds(values) ? { override_holds: true } : {}) };
  try {
    return await ok(api.POST('/api/v1/projects/{id}/deployments/{did}/transition/', { params: { path: { ...path, did: created.id } }, body: start }));
  } catch (error) {
    // Another job started it first: what it is now is the answer.
    const now = await ok(api.GET('/api/v1/projects/{id}/deployments/{did}/', { params: { path: { ...path, did: created.id } } }));
    if (now.state === 'draft') throw error;
    return now;
  }
}

/** A significance level: above 0 and at most 0.1. */
function fraction(text: string, flag: string): number {
  const value = Number(text);
  if (!/^\d*\.?\d+(e-?\d+)?$/i.test(text) || !(value > 0 && value <= 0.1)) throw new UsageError(`${flag} takes a number above 0 and at most 0.1, e.g. 0.001`);
  return value;
}
