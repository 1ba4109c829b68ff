import { invalidArgument, isDomainError, notFound } from '@ota/errors';
import type { artifacts } from '@ota/proto';
import type { GatewayDeps } from '../deps';
import { CrashGroupFilter } from '../http/crash-schemas';
import { HttpError } from '../http/errors';
import type { OperationTable } from '../http/operations';
import { readBody } from '../http/raw-body';
import { artifactJson } from '../http/present';
import * as R from '../http/response-schemas';
import { UUID_PATTERN } from '../http/validate';
import { deviceIdOf, pathId, rpc } from './context';

/** One gRPC message of an ELF on its way to the artifacts service. */
const ELF_CHUNK_BYTES = 64 * 1024;

const CORE_DUMP_QUERY = {
  type: 'object',
  additionalProperties: false,
  required: ['sha256', 'size', 'offset'],
  properties: {
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$', description: "The whole dump's SHA-256: its name while it arrives, and its content address once stored." },
    size: { type: 'integer', minimum: 1, maximum: 9_999_999_999, description: "The whole dump's size in bytes." },
    offset: { type: 'integer', minimum: 0, maximum: 9_999_999_999, description: 'Where in the dump this piece starts.' },
    device_id: { type: 'string', minLength: 1, maxLength: 128, description: 'With a project token: the device that sends it.' },
  },
} as const;

/** Core dumps in, crash groups out (docs/api.md, "Core dumps"). */
export function crashRoutes(table: OperationTable, deps: GatewayDeps): void {
  const deviceApi = table.section({ tag: 'Device API', access: 'device' });
  const crashes = table.section({ tag: 'Crashes', access: 'developer' });
  const { clients, audit } = deps;

  deviceApi.add(
    {
      route: 'POST /ota/coredump/',
      operationId: 'uploadCoreDump',
      summary: 'Send a core dump',
      description:
        "A device sends the core dump ESP-IDF wrote to flash after a panic, as it is there (header, ELF core file, checksum), in pieces of at most COREDUMP_PIECE_MAX_BYTES: each request's body is the bytes from `offset`. The answer's `received` is where the next piece starts, also after a cut, so a device resumes by sending from there; a piece elsewhere changes nothing and is answered the same way. Once `complete` the dump is stored (once, however often it is sent) and the device may erase it. 400 for a dump that is not whole, not an ESP-IDF core dump, or not the SHA-256 it was named by (nothing is kept); 404 for a device the project has not registered; 413 for a piece or dump past the limits; 429 past COREDUMP_MAX_PER_DEVICE_PER_HOUR new dumps an hour.",
      query: CORE_DUMP_QUERY,
      rawBody: { description: 'The bytes of the dump from `offset`.' },
      responses: { 200: R.CoreDumpReceipt },
      errors: [404, 413, 429],
    },
    async (ctx, { principal, query }) => {
      const deviceId = deviceIdOf(principal, query.device_id);
      const size = Number(query.size);
      const offset = Number(query.offset);
      if (size > deps.config.COREDUMP_MAX_BYTES) throw new HttpError(413, `the dump is ${size} bytes; the service takes dumps of at most ${deps.config.COREDUMP_MAX_BYTES} bytes (COREDUMP_MAX_BYTES)`);
      const piece = await readBody(ctx, deps.config.COREDUMP_PIECE_MAX_BYTES, 'a piece of a core dump', 'COREDUMP_PIECE_MAX_BYTES');
      const projectId = principal.token.projectId;
      const device = await clients.registry.getDevice({ projectId, id: '', deviceId }, rpc(ctx)).catch((error: unknown) => {
        if (isDomainError(error, 'NotFound')) throw notFound('this project has no such device: a device sends core dumps once it has checked in');
        throw error;
      });
      const answer = await clients.artifacts.receiveCoreDump(
        {
          projectId,
          deviceId,
          // The build it confirmed last, else the one it reported health for: what it most likely ran.
          deviceBuildNumber: Number(device.device?.currentBuildNumber || device.device?.health?.buildNumber || 0),
          sha256: query.sha256.toLowerCase(),
          size,
          offset,
          piece,
          maxPerDevicePerHour: deps.config.COREDUMP_MAX_PER_DEVICE_PER_HOUR,
        },
        rpc(ctx),
      );
      ctx.body = { received: Number(answer.received), complete: answer.complete, ...(answer.crashId ? { crash_id: answer.crashId } : {}) };
    },
  );

  crashes.add(
    {
      route: 'PUT /projects/:id/artifacts/:aid/elf/',
      operationId: 'uploadArtifactElf',
      summary: "Upload a build's ELF",
      description:
        "The ELF the build's image was made from (the raw body, at most ELF_MAX_BYTES), kept in object storage: the build's core dumps are decoded with it, and those that waited for it are decoded now. When the image names its ELF's SHA-256 (ESP-IDF's app descriptor does), only that ELF is taken (400 for another); a build's ELF is never replaced (409). Sending the same ELF again changes nothing (200).",
      project: 'operator',
      rawBody: { description: 'The ELF file.' },
      responses: { 200: R.Artifact },
      errors: [404, 409, 413],
    },
    async (ctx, { project, principal }) => {
      const artifactId = pathId(ctx, 'aid', 'artifact');
      const limit = deps.config.ELF_MAX_BYTES;
      const declared = Number(ctx.get('content-length') || NaN);
      if (declared > limit) throw new HttpError(413, `the ELF is larger than ${limit} bytes (ELF_MAX_BYTES)`);
      const messages = async function* () {
        yield { part: { $case: 'header' as const, header: { projectId: project.id, artifactId } } };
        let size = 0;
        for await (const data of ctx.req as AsyncIterable<Buffer>) {
          size += data.length;
          if (size > limit) throw new HttpError(413, `the ELF is larger than ${limit} bytes (ELF_MAX_BYTES)`);
          for (let start = 0; start < data.length; start += ELF_CHUNK_BYTES) yield { part: { $case: 'chunk' as const, chunk: data.subarray(start, start + ELF_CHUNK_BYTES) } };
        }
      };
      const answer = await clients.artifacts.putArtifactElf(messages(), rpc(ctx));
      const artifact = answer.artifact as artifacts.Artifact;
      const builds = (await clients.artifacts.listArtifacts({ projectId: project.id }, rpc(ctx))).artifacts;
      if (answer.changed) {
        await audit.record(principal, {
          projectId: project.id,
          action: 'artifact.elf_uploaded',
          targetType: 'artifact',
          targetId: artifact.id,
          details: { build_number: artifact.buildNumber, elf_sha256: artifact.elf?.sha256, crashes_requeued: Number(answer.crashesRequeued) },
        });
      }
      ctx.body = artifactJson(artifact, builds);
    },
  );

  crashes.add(
    {
      route: 'GET /projects/:id/crashes/',
      operationId: 'listCrashGroups',
      summary: 'List crash groups',
      description:
        "The project's crashes grouped by build and signature, the most recently seen first (at most 500 groups). `count` and `devices` count the crashes within the filter.",
      project: 'viewer',
      query: CrashGroupFilter,
      responses: { 200: R.arrayOf(R.CrashGroup) },
      errors: [404],
    },
    async (ctx, { project, query }) => {
      let artifactId = query.artifact_id;
      let since = query.since ? dateOf(query.since) : undefined;
      if (query.deployment_id) {
        const { deployment } = await clients.rollout.getDeployment({ projectId: project.id, deploymentId: query.deployment_id }, rpc(ctx));
        if (!deployment) throw notFound('no such deployment in this project');
        if (artifactId && artifactId !== deployment.artifactId) throw invalidArgument("artifact_id is not the deployment's build");
        artifactId = deployment.artifactId;
        const started = deployment.startedAt ?? deployment.createdAt;
        if (started && (!since || since < started)) since = started;
      }
      const filtered = Boolean(artifactId || since);
      const [{ groups }, every, builds] = await Promise.all([
        clients.artifacts.listCrashGroups({ projectId: project.id, artifactId: artifactId ?? '', since }, rpc(ctx)),
        // What every build crashed with, to tell the crashes new in a build from the old ones.
        filtered ? clients.artifacts.listCrashGroups({ projectId: project.id, artifactId: '' }, rpc(ctx)) : undefined,
        clients.artifacts.listArtifacts({ projectId: project.id }, rpc(ctx)),
      ]);
      const known = knownSignatures(every?.groups ?? groups, builds.artifacts);
      ctx.body = groups.map((group) => crashGroupJson(group, builds.artifacts, known));
    },
  );

  crashes.add(
    {
      route: 'GET /projects/:id/crashes/:cgid/',
      operationId: 'getCrashGroup',
      summary: 'Read a crash group',
      description: 'The group, with its 20 newest crashes.',
      project: 'viewer',
      responses: { 200: R.CrashGroupDetail },
      errors: [404],
    },
    async (ctx, { project }) => {
      const groupId = String(ctx.params.cgid);
      if (!/^[0-9a-f]{24}$/.test(groupId)) throw notFound('no such crash group in this project');
      const [{ group, samples }, builds] = await Promise.all([
        clients.artifacts.getCrashGroup({ projectId: project.id, groupId, samples: 20 }, rpc(ctx)),
        clients.artifacts.listArtifacts({ projectId: project.id }, rpc(ctx)),
      ]);
      const { groups: every } = await clients.artifacts.listCrashGroups({ projectId: project.id, artifactId: '' }, rpc(ctx));
      ctx.body = { group: crashGroupJson(group!, builds.artifacts, knownSignatures(every, builds.artifacts)), samples: samples.map(crashJson) };
    },
  );
}

function dateOf(text: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw invalidArgument('since is not a date-time that exists');
  return date;
}

const hex32 = (value: number | bigint) => `0x${Number(value).toString(16).padStart(8, '0')}`;
const frameJson = (frame: artifacts.CrashFrame) => ({ function: frame.function, file: frame.file, line: frame.line, address: hex32(frame.address) });

/** The lowest build number each signature crashed on. */
function knownSignatures(groups: readonly artifacts.CrashGroup[], builds: readonly artifacts.Artifact[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const group of groups) {
    const build = builds.find((artifact) => artifact.id === group.artifactId);
    if (!build) continue;
    const number = Number(build.buildNumber);
    if (number < (first.get(group.signature) ?? Infinity)) first.set(group.signature, number);
  }
  return first;
}

function crashGroupJson(group: artifacts.CrashGroup, builds: readonly artifacts.Artifact[], firstBuildOf: ReadonlyMap<string, number>) {
  const build = builds.find((artifact) => artifact.id === group.artifactId);
  const buildNumber = build ? Number(build.buildNumber) : null;
  return {
    id: group.id,
    artifact_id: UUID_PATTERN.test(group.artifactId) ? group.artifactId : null,
    build_number: buildNumber,
    signature: group.signature,
    reason: group.reason,
    frames: group.frames.map(frameJson),
    count: Number(group.count),
    devices: Number(group.devices),
    first_seen: group.firstSeen!.toISOString(),
    last_seen: group.lastSeen!.toISOString(),
    decoding: group.decoding,
    new_in_build: buildNumber !== null && (firstBuildOf.get(group.signature) ?? buildNumber) >= buildNumber,
  } satisfies R.Promised<typeof R.CrashGroup>;
}

function crashJson(crash: artifacts.Crash) {
  return {
    id: crash.id,
    device_id: crash.deviceId,
    artifact_id: crash.artifactId || null,
    attribution: crash.attribution,
    sha256: crash.sha256,
    size: Number(crash.size),
    chip: crash.chip,
    format_version: crash.formatVersion,
    elf_sha256_prefix: crash.elfSha256Prefix,
    reason: crash.reason,
    panic_details: crash.panicDetails,
    pc: crash.pc === undefined ? null : hex32(crash.pc),
    task: crash.task,
    in_interrupt: crash.inInterrupt,
    frames: crash.frames.map(frameJson),
    decoding: crash.decoding,
    decoding_note: crash.decodingNote,
    received_at: crash.receivedAt!.toISOString(),
  } satisfies R.Promised<typeof R.Crash>;
}
