import { conflict, invalidArgument } from '@ota/errors';
import type { Handlers } from '@ota/grpc';
import { type artifacts as pb } from '@ota/proto';
import type { Artifacts, UploadHeader } from '../domain/artifacts';
import type { Patch } from '../domain/model';
import type { Patches } from '../domain/patches';
import type { Crashes } from '../domain/crashes';
import type { Crash, CrashGroupSummary } from '../domain/crash-model';
import type { SigningKey } from '../domain/signing-keys';
import { artifactMessage, sbomMessage } from './artifact-message';
import type { Sboms } from '../domain/sboms';

const cancelledUpload = () => conflict('the upload was cancelled before it completed; nothing was stored');

// Messages of a streamed download: small enough to interleave with other calls on the connection.
const DOWNLOAD_CHUNK_BYTES = 64 * 1024;

export function artifactsHandlers(artifacts: Artifacts, patches: Patches, crashes: Crashes, sboms: Sboms, settings: { maxElfBytes: number }): Omit<Handlers<typeof pb.ArtifactsServiceService>, 'recordVulnerability' | 'listVulnerabilities' | 'getVulnerability' | 'setVexStatement'> {
  return {
    async putArtifactSbom(request) {
      const { artifact, changed } = await sboms.put(request.projectId, request.artifactId, Buffer.from(request.document));
      return { artifact: artifactMessage(artifact), changed };
    },
    async findSbomComponents(request) {
      const { matches, withoutSbom } = await sboms.findComponents(request.projectId, request);
      return {
        matches: matches.map(({ artifact, component }) => ({
          artifactId: artifact.id,
          buildNumber: artifact.buildNumber,
          versionLabel: artifact.versionLabel,
          name: component.name,
          version: component.version,
          purl: component.purl,
        })),
        buildsWithoutSbom: withoutSbom.map((build) => ({ artifactId: build.id, buildNumber: build.buildNumber })),
      };
    },
    async getArtifactSbom(request) {
      const { sbom, document } = await sboms.get(request.projectId, request.artifactId);
      return { sbom: sbomMessage(sbom), document };
    },
    async putArtifactElf(requests, ctx) {
      const iterator = requests[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done || first.value.part?.$case !== 'header') throw invalidArgument('an ELF upload starts with its header');
      const { projectId, artifactId } = first.value.part.header;
      const chunks = async function* () {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          if (next.value.part?.$case !== 'chunk') throw invalidArgument('only chunks may follow the header');
          yield next.value.part.chunk;
        }
        if (ctx.cancelled()) throw cancelledUpload();
      };
      const { artifact, changed, requeued } = await crashes.putElf(projectId, artifactId, chunks(), settings.maxElfBytes);
      return { artifact: artifactMessage(artifact), changed, crashesRequeued: requeued };
    },
    async receiveCoreDump(request) {
      const { received, crash } = await crashes.receive({
        projectId: request.projectId,
        deviceId: request.deviceId,
        deviceBuildNumber: Number(request.deviceBuildNumber),
        sha256: request.sha256,
        size: request.size,
        offset: request.offset,
        piece: Buffer.from(request.piece),
        maxPerDevicePerHour: request.maxPerDevicePerHour,
      });
      return { received, complete: crash !== null, crashId: crash?.id ?? '' };
    },
    async listCrashGroups(request) {
      const groups = await crashes.listGroups(request.projectId, { artifactId: request.artifactId || undefined, since: request.since });
      return { groups: groups.map(crashGroupMessage) };
    },
    async getCrashGroup(request) {
      const { group, samples } = await crashes.getGroup(request.projectId, request.groupId, request.samples || 20);
      return { group: crashGroupMessage(group), samples: samples.map(crashMessage) };
    },
    async uploadArtifact(requests, ctx) {
      const iterator = requests[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done || first.value.part?.$case !== 'header') throw invalidArgument('an upload starts with its header');
      const header: UploadHeader = {
        projectId: first.value.part.header.projectId,
        ownerId: first.value.part.header.ownerId,
        manifestJson: first.value.part.header.manifestJson,
        maxUploadsPerMonth: first.value.part.header.maxUploadsPerMonth,
        requireEspImage: first.value.part.header.requireEspImage,
      };
      const endsWithEmptyChunk = first.value.part.header.endsWithEmptyChunk;
      const chunks = async function* () {
        let ended = false;
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          if (next.value.part?.$case !== 'chunk') throw invalidArgument('only binary chunks may follow the header');
          ended = next.value.part.chunk.length === 0;
          if (!ended) yield next.value.part.chunk;
        }
        // Without its closing empty chunk the sender gave the upload up: store nothing.
        if ((endsWithEmptyChunk && !ended) || ctx.cancelled()) throw cancelledUpload();
      };
      return { artifact: artifactMessage(await artifacts.upload(header, chunks())) };
    },
    async getArtifact(request) {
      return { artifact: artifactMessage(await artifacts.get(request.projectId, request.artifactId)) };
    },
    async listArtifacts(request) {
      return { artifacts: (await artifacts.list(request.projectId || undefined)).map(artifactMessage) };
    },
    async setArtifactArchived(request) {
      const { artifact, changed } = await artifacts.setArchived(request.projectId, request.artifactId, request.archived);
      return { artifact: artifactMessage(artifact), changed };
    },
    async createSigningKey(request) {
      return { key: signingKeyMessage(await artifacts.createSigningKey(request.projectId, request.name, request.publicKey)) };
    },
    async listSigningKeys(request) {
      return { keys: (await artifacts.listSigningKeys(request.projectId)).map(signingKeyMessage) };
    },
    async deleteSigningKey(request) {
      await artifacts.deleteSigningKey(request.projectId, request.keyId);
      return {};
    },
    async requestPatch(request) {
      return { patch: patchMessage(await patches.request(request.projectId, request.targetArtifactId, request.baseArtifactId)) };
    },
    async patchForOffer(request) {
      const patch = await patches.forOffer(request.projectId, request.targetArtifactId, request.baseSha256, request.format);
      return { patch: patch ? patchMessage(patch) : undefined };
    },
    async listPatches(request) {
      return { patches: (await patches.list(request.projectId, request.targetArtifactId)).map(patchMessage) };
    },
    async *readArtifactBinary(request) {
      const body = request.patchBaseSha256
        ? await patches.read(request.artifactId, request.patchBaseSha256, request.offset, request.length)
        : await artifacts.readBinary(request.artifactId, request.offset, request.length);
      let offset = request.offset;
      for await (const piece of body as AsyncIterable<Buffer>) {
        for (let start = 0; start < piece.length; start += DOWNLOAD_CHUNK_BYTES) {
          const chunk = piece.subarray(start, start + DOWNLOAD_CHUNK_BYTES);
          yield { chunk, offset };
          offset += chunk.length;
        }
      }
    },
  };
}

function signingKeyMessage(key: SigningKey): pb.SigningKey {
  return { id: key.id, projectId: key.projectId, name: key.name, publicKey: key.publicKey, fingerprint: key.fingerprint, createdAt: key.createdAt };
}

function patchMessage(patch: Patch): pb.Patch {
  return {
    id: patch.id,
    projectId: patch.projectId,
    baseArtifactId: patch.baseArtifactId,
    targetArtifactId: patch.targetArtifactId,
    baseSha256: patch.baseSha256,
    targetSha256: patch.targetSha256,
    format: patch.format,
    state: patch.state,
    reason: patch.reason,
    size: patch.size,
    sha256: patch.sha256,
    attempts: patch.attempts,
    createdAt: patch.createdAt,
    updatedAt: patch.updatedAt,
  };
}

function crashGroupMessage(group: CrashGroupSummary): pb.CrashGroup {
  return {
    id: group.id,
    projectId: group.projectId,
    artifactId: group.artifactId,
    signature: group.signature,
    reason: group.reason,
    frames: group.frames,
    count: group.count,
    devices: group.devices,
    firstSeen: group.firstSeen,
    lastSeen: group.lastSeen,
    decoding: group.decoding,
  };
}

function crashMessage(crash: Crash): pb.Crash {
  return {
    id: crash.id,
    projectId: crash.projectId,
    deviceId: crash.deviceId,
    artifactId: crash.artifactId,
    attribution: crash.attribution,
    sha256: crash.sha256,
    size: crash.size,
    chip: crash.chip,
    formatVersion: crash.formatVersion,
    elfSha256Prefix: crash.elfSha256Prefix,
    reason: crash.reason,
    panicDetails: crash.panicDetails,
    pc: crash.pc ?? undefined,
    task: crash.task,
    inInterrupt: crash.inInterrupt,
    frames: crash.frames,
    decoding: crash.decoding,
    decodingNote: crash.decodingNote,
    groupId: crash.groupId ?? '',
    receivedAt: crash.receivedAt,
  };
}
